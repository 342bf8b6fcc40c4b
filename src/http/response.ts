import { Response as FetchResponse } from "@whatwg-node/fetch";

// The Response class every answer of this service is built with: the one Yoga answers GraphQL with
// (@whatwg-node/fetch). Its status text defaults to the status's reason phrase, where Node's global Response leaves it
// empty and status lines went out as "HTTP/1.1 401 " with no phrase; and a string body is written in one piece.
// Modules that build responses import it in place of the global.
//
// Its Headers keep a plain-object init as given and later set() by lower-case name (0.8.6), so a header named
// `X-Content-Type-Options` here and set again by a plugin went out twice. Names are lower-cased on the way in.

type Init = ConstructorParameters<typeof FetchResponse>[1];

function lowerCased(init: Init): Init {
  const headers = init?.headers;
  if (
    !headers ||
    typeof headers !== "object" ||
    Array.isArray(headers) ||
    typeof (headers as Headers).get === "function"
  )
    return init;
  return {
    ...init,
    headers: Object.fromEntries(
      Object.entries(headers as Record<string, string>).map(([name, value]) => [name.toLowerCase(), value]),
    ),
  };
}

export class Response extends FetchResponse {
  constructor(body?: ConstructorParameters<typeof FetchResponse>[0], init?: Init) {
    super(body, lowerCased(init));
  }

  static override json(data: unknown, init?: Init): Response {
    return super.json(data, lowerCased(init)) as Response;
  }
}
