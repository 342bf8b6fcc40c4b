import { createSourceEventStream, execute, type ExecutionArgs, type ExecutionResult } from "graphql";
import { isAsyncIterable, mapAsyncIterator } from "graphql-yoga";
import { requestStore, type Context } from "../request/context.ts";

/**
 * A subscription as graphql-js runs one (its source stream, then the selection executed once per event), except that
 * each event is executed with a context of its own: a subscription lives for hours on one request's context, whose
 * DataLoaders (ours, in `loaders`, and Pothos's, cached per context object) would otherwise answer later events with
 * the rows read for earlier ones. Each event also reads under a fresh row budget (MAX_ROWS_PER_REQUEST), as a query
 * does. Nothing is held between events: no concurrency place (src/http/concurrency.ts) and no execution timer
 * (src/http/limits.ts) wrap a subscription, only each event's short read.
 */
export async function subscribeWithContextPerEvent(
  args: ExecutionArgs,
): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
  const stream = await createSourceEventStream(args);
  if (!isAsyncIterable(stream)) return stream;
  const ctx = args.contextValue as Context;
  const iterator = stream[Symbol.asyncIterator]();
  return mapAsyncIterator(iterator, (payload: unknown) =>
    execute({
      ...args,
      rootValue: payload,
      contextValue: { ...ctx, store: requestStore(ctx.store, ctx.config), loaders: new Map() },
    }),
  );
}
