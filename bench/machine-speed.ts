/**
 * How fast this machine runs a fixed piece of JavaScript at the moment: the bench shares its two cores with other
 * work, and on 2026-11-27 the same builds of the service and the floor took 1.8 times the CPU per read request in the
 * afternoon that they took in the morning (FINDINGS.md). Two runs' figures are comparable only when this one is close
 * in both. The task is JSON work the size of a W1 answer, as the service does per request: encoding, parsing, garbage.
 */
const answer = {
  data: Array.from({ length: 20 }, (_, i) => ({
    id: i + 1,
    user_id: 7,
    rank_id: 3,
    document_id: null,
    author_id: 11,
    text: `Promotion number ${i}`,
    type: i % 4,
    created_at: "2026-11-27T12:00:00.000000Z",
    updated_at: "2026-11-27T12:00:00.000000Z",
    author: Object.fromEntries(
      Array.from({ length: 24 }, (_, k) => [`field_${k}`, k % 3 ? `value ${k} of author ${i}` : k]),
    ),
    rank: {
      id: 3,
      name: "Sergeant",
      abbreviation: "SGT",
      order: 3,
      image: { id: 9, path: "ranks/sgt.png", url: "https://x.test/ranks/sgt.png" },
    },
  })),
};

/** Milliseconds for one pass of the task: 100 encodings and parsings of the answer. */
function pass(): number {
  const start = performance.now();
  let size = 0;
  for (let i = 0; i < 100; i++) size += (JSON.parse(JSON.stringify(answer)) as typeof answer).data.length;
  if (size !== 2000) throw new Error("machine speed task miscounted");
  return performance.now() - start;
}

/** The median of 9 passes after 5 to warm up, in ms: lower is faster. */
export function machineSpeedMs(): number {
  for (let i = 0; i < 5; i++) pass();
  const passes = Array.from({ length: 9 }, pass).sort((a, b) => a - b);
  return passes[4];
}
