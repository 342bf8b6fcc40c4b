import { escapeHtml, FORM_STYLE, PAGE_STYLE } from "./pages.ts";

/*
 * The OpenID provider's pages (sign-in, consent, sign-out, errors): server-rendered HTML in the front door's look, no
 * script, every control labelled and reachable by keyboard, every POST form carrying its CSRF token.
 */

/** The service's page and form style (src/http/pages.ts), and what these pages add: a second button, the scopes. */
const pageStyle = `${PAGE_STYLE}${FORM_STYLE}
    button { margin-right: .5rem; }
    button.secondary { background: #fff; color: #2456c8; box-shadow: inset 0 0 0 1px #2456c8; }
    .muted { color: #5b6475; }
    .scopes li { margin: .4rem 0; } .scopes .refused { color: #5b6475; text-decoration: line-through; }`;

/** A whole page: `title` as its heading, `body` (HTML, already escaped) below it. */
export function oidcPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(title)} · Muster</title>
  <style>${pageStyle}
  </style>
</head>
<body>
  <main>
    <h1>${escapeHtml(title)}</h1>
${body}
  </main>
</body>
</html>
`;
}

const csrfField = (token: string) => `<input type="hidden" name="csrf" value="${escapeHtml(token)}">`;

export interface SignInPage {
  action: string;
  csrf: string;
  clientName: string;
  email?: string;
  /** Why the last attempt failed (a generic message), if it did. */
  problem?: string;
  forgotPasswordUrl: string;
  cancelAction: string;
}

export function signInPage(p: SignInPage): string {
  const alert = p.problem ? `    <p class="problem" role="alert" id="problem">${escapeHtml(p.problem)}</p>\n` : "";
  const described = p.problem ? ' aria-describedby="problem"' : "";
  return oidcPage(
    "Sign in",
    `    <p class="muted">to continue to <strong>${escapeHtml(p.clientName)}</strong></p>
${alert}    <form method="post" action="${escapeHtml(p.action)}">
      ${csrfField(p.csrf)}
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required autofocus value="${escapeHtml(p.email ?? "")}"${described}>
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required${described}>
      <button type="submit">Sign in</button>
      <button type="submit" class="secondary" form="cancel">Cancel</button>
    </form>
    <form method="post" id="cancel" action="${escapeHtml(p.cancelAction)}">
      ${csrfField(p.csrf)}
    </form>
    <p><a href="${escapeHtml(p.forgotPasswordUrl)}">Forgot your password?</a></p>`,
  );
}

export interface ConsentPage {
  action: string;
  csrf: string;
  clientName: string;
  personName: string;
  /** What the client asks for, in words; `granted` false where the person's roles do not permit it. */
  scopes: Array<{ scope: string; words: string; granted: boolean }>;
}

export function consentPage(p: ConsentPage): string {
  const items = p.scopes
    .map((s) =>
      s.granted
        ? `<li>${escapeHtml(s.words)} <code>${escapeHtml(s.scope)}</code></li>`
        : `<li><span class="refused">${escapeHtml(s.words)} <code>${escapeHtml(s.scope)}</code></span> — not given: your roles do not permit it</li>`,
    )
    .join("\n        ");
  return oidcPage(
    "Allow access?",
    `    <p><strong>${escapeHtml(p.clientName)}</strong> asks to act for you, ${escapeHtml(p.personName)}, and to:</p>
    <ul class="scopes">
        ${items}
    </ul>
    <form method="post" action="${escapeHtml(p.action)}">
      ${csrfField(p.csrf)}
      <button type="submit" name="decision" value="allow">Allow</button>
      <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
    </form>`,
  );
}

/** oidc-provider's sign-out question: its form (hidden inputs, its own CSRF token) and our two buttons. */
export function signOutPage(form: string, clientName: string | undefined): string {
  return oidcPage(
    "Sign out?",
    `    <p>Do you want to sign out${clientName ? ` of <strong>${escapeHtml(clientName)}</strong>` : ""}?</p>
    ${form}
    <button type="submit" form="op.logoutForm" name="logout" value="yes">Yes, sign me out</button>
    <button type="submit" form="op.logoutForm" class="secondary">No, stay signed in</button>`,
  );
}

export const signedOutPage = (): string => oidcPage("Signed out", `    <p>You are signed out.</p>`);

/** An error page: what went wrong, in the words of RFC 6749's `error` and `error_description`. */
export function errorPage(error: string, description: string | undefined): string {
  return oidcPage(
    "Something went wrong",
    `    <p class="problem" role="alert"><code>${escapeHtml(error)}</code>${description ? `: ${escapeHtml(description)}` : ""}</p>
    <p><a href="/">Back to the front door</a></p>`,
  );
}
