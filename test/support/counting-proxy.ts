import net from "node:net";

/**
 * A TCP proxy in front of the PostgreSQL server of `databaseUrl` that counts the chunks it reads from its clients:
 * each round trip of ours is one write the service corks and then waits on, so one chunk.
 */
export async function countingProxy(databaseUrl: string): Promise<{ url: string; chunks(): number; close(): void }> {
  const target = new URL(databaseUrl);
  let chunks = 0;
  const proxy = net.createServer((socket) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    socket.on("data", () => void chunks++);
    socket.pipe(upstream).pipe(socket);
    socket.on("error", () => upstream.destroy());
    upstream.on("error", () => socket.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const url = new URL(target);
  url.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
  return { url: url.toString(), chunks: () => chunks, close: () => void proxy.close() };
}
