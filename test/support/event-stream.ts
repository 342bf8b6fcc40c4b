/**
 * A GraphQL subscription read over Server-Sent Events (GraphQL over SSE, "distinct connections" mode, as graphql-yoga
 * answers `Accept: text/event-stream`): the `next` payloads as they arrive, the end of the stream, and a way to close it.
 */
export interface EventStream {
  status: number;
  headers: Headers;
  /** The next `next` payload; rejects when the stream completes first or nothing comes within `ms` (a stalled test). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a payload read as its subscription's fields, like Reply.body
  next(ms?: number): Promise<any>;
  /** Resolves once the server completes the stream (`event: complete`, or the body ends). */
  completed(ms?: number): Promise<void>;
  close(): Promise<void>;
}

export function readEventStream(response: Response): EventStream {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const payloads: unknown[] = [];
  const waiting: Array<() => void> = [];
  let buffer = "";
  let done = false;
  const wake = () => waiting.splice(0).forEach((resolve) => resolve());
  void (async () => {
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        buffer += decoder.decode(chunk.value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = block.split("\n");
          const event = lines
            .find((l) => l.startsWith("event:"))
            ?.slice(6)
            .trim();
          const data = lines
            .filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).trimStart())
            .join("\n");
          if (event === "next") payloads.push(JSON.parse(data));
          if (event === "complete") done = true;
          wake();
        }
      }
    } catch {
      // Cancelled by close().
    }
    done = true;
    wake();
  })();
  const until = async (ready: () => boolean, ms: number, what: string) => {
    const deadline = Date.now() + ms;
    while (!ready()) {
      if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms`);
      await new Promise<void>((resolve) => {
        waiting.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  };
  return {
    status: response.status,
    headers: response.headers,
    async next(ms = 10_000) {
      await until(() => payloads.length > 0 || done, ms, "event");
      if (!payloads.length) throw new Error("the stream completed without another event");
      return payloads.shift();
    },
    completed: (ms = 10_000) => until(() => done, ms, "completion"),
    close: () => reader.cancel(),
  };
}

/**
 * The first item of a subscription opened just before, and the ids written to bring it: a subscription is open once a
 * write made after it arrives, so `write` (answering the id it wrote) runs until one does, 100 ms apart.
 */
export async function writeUntilArrives<T>(
  next: Promise<T>,
  write: () => Promise<number>,
): Promise<{ first: T; written: number[] }> {
  let arrived = false;
  void next.then(() => (arrived = true));
  const written: number[] = [];
  while (!arrived) {
    written.push(await write());
    await Promise.race([next, new Promise((resolve) => setTimeout(resolve, 100))]);
  }
  return { first: await next, written };
}
