import type { IncomingMessage, ServerResponse } from "node:http";
import type { App } from "./app.ts";
import type { Oidc } from "../http/oidc.ts";

/** What the node HTTP server does with a request: the OpenID provider's paths go to it, everything else to Yoga. */
export function requestListener(app: App, oidc: Oidc): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const pathname = (req.url ?? "/").split("?", 1)[0];
    if (oidc.handles(pathname)) oidc.handle(req, res);
    else void app.yoga(req, res);
  };
}
