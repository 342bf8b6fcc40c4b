// The Response class every answer of this service is built with: the one Yoga answers GraphQL with
// (@whatwg-node/fetch). Its status text defaults to the status's reason phrase, where Node's global Response leaves it
// empty and status lines went out as "HTTP/1.1 401 " with no phrase; and a string body is written in one piece.
// Modules that build responses import it in place of the global.
export { Response } from "@whatwg-node/fetch";
