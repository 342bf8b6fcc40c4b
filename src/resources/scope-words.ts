import { pluralWords } from "../core/names.ts";
import { resources } from "./index.ts";

/** What a scope lets a client do, in words: the consent page lists them, the OpenAPI document's OAuth scheme too. */
export function scopeInWords(scope: string): string {
  switch (scope) {
    case "openid":
      return "Know who you are: your person id, account and role names";
    case "profile":
      return "See your name";
    case "email":
      return "See your email address";
    case "offline_access":
      return "Stay signed in after you leave (refresh tokens)";
    case "*":
      return "Do everything your roles permit";
  }
  const [verb, noun] = scope.split(":");
  const def = resources.find((d) => !d.link && d.scope === noun);
  const what = def ? pluralWords(def) : (noun ?? "").replace(/-/g, " ");
  const verbs: Record<string, string> = { view: "View", create: "Create", update: "Update", delete: "Delete" };
  return noun ? `${verbs[verb] ?? verb.charAt(0).toUpperCase() + verb.slice(1)} ${what}` : scope;
}
