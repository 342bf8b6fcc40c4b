import { Response } from "./response.ts";

/*
 * The service's few HTML pages (the front door, the password pages): one look, no script, nothing loaded from
 * elsewhere.
 */

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The front door's style, which every page shares. */
export const PAGE_STYLE = `
    body { font: 16px/1.5 system-ui, sans-serif; max-width: 42rem; margin: 3rem auto; padding: 0 1rem; color: #1d2330; }
    h1 { margin-bottom: 0; } .version { color: #5b6475; margin-top: 0; }
    ul { padding-left: 1.2rem; } li { margin: .3rem 0; }
    code, pre { font-family: ui-monospace, monospace; background: #f1f3f7; border-radius: 4px; }
    code { padding: 0 .25rem; } pre { padding: .75rem; overflow-x: auto; }
    a { color: #2456c8; }`;

/** What the forms add to it: labelled fields one above the other, a visible focus, messages that stand out. */
const FORM_STYLE = `
    form { margin-top: 1.5rem; max-width: 24rem; }
    label { display: block; font-weight: 600; margin-top: 1rem; }
    .hint { color: #5b6475; font-size: .9rem; margin: .1rem 0 .3rem; }
    input[type=email], input[type=password] { display: block; width: 100%; box-sizing: border-box; font: inherit;
      padding: .5rem .6rem; border: 1px solid #8a93a6; border-radius: 4px; }
    button { margin-top: 1.5rem; font: inherit; font-weight: 600; padding: .55rem 1.2rem; border: 0; border-radius: 4px;
      background: #2456c8; color: #fff; cursor: pointer; }
    input:focus-visible, button:focus-visible, a:focus-visible { outline: 3px solid #f2a900; outline-offset: 2px; }
    .problem { border-left: 4px solid #c62828; background: #fdecea; padding: .5rem .75rem; }
    .done { border-left: 4px solid #2e7d32; background: #edf7ed; padding: .5rem .75rem; }`;

/** A page of the service: `body` is HTML already escaped. */
export function htmlPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(title)} · Muster</title>
  <style>${PAGE_STYLE}${FORM_STYLE}
  </style>
</head>
<body>
  <main>
${body}
  </main>
</body>
</html>
`;
}

/**
 * A page answer: never cached (a form carries a link's token), posting only to this origin, framed nowhere, no
 * script.
 */
export function pageResponse(html: string, status = 200, method = "GET"): Response {
  return new Response(method === "HEAD" ? null : html, {
    status,
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "Content-Security-Policy":
        "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    },
  });
}
