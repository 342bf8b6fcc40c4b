import { distance } from "fastest-levenshtein";

/** The names of `candidates` nearest to `name` by edit distance, at most `count`: what a misspelt name likely meant. */
export function closestNames(name: string, candidates: readonly string[], count = 3): string[] {
  const scored = candidates.map((candidate) => ({ candidate, d: distance(name, candidate) }));
  const best = Math.min(...scored.map((s) => s.d));
  return scored
    .filter((s) => s.d === best)
    .slice(0, count)
    .map((s) => s.candidate);
}
