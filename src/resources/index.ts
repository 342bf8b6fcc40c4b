import type { PivotDef, ResourceDef } from "./define.ts";
import user from "./user.ts";
import rank from "./rank.ts";
import rankRecord from "./rank-record.ts";
import {
  assignmentRecord,
  awardRecord,
  combatRecord,
  qualificationRecord,
  serviceRecord,
  trainingRecord,
} from "./records.ts";
import { award, category, document, group, position, qualification, specialty, status, unit } from "./organisation.ts";
import { calendar, event, schedule } from "./calendar.ts";
import { announcement, message, setting } from "./communication.ts";
import { field, form, submission, tag, task } from "./forms.ts";
import { attachment, comment, image } from "./polymorphic.ts";
import { newsfeedItem } from "./newsfeed.ts";
import { links } from "./links.ts";
import { webhook, webhookDelivery } from "./webhook.ts";
import { automation, automationRun } from "./automation.ts";
import { role } from "./role.ts";
import { oauthClient } from "./oauth-client.ts";
import { apiKey } from "./api-key.ts";
import { signInLink } from "./sign-in-link.ts";

/** Every resource of the API. Adding a resource means adding its definition here (and its Prisma model). */
export const resources: ResourceDef[] = [
  user,
  rank,
  rankRecord,
  assignmentRecord,
  awardRecord,
  combatRecord,
  qualificationRecord,
  serviceRecord,
  trainingRecord,
  specialty,
  position,
  unit,
  group,
  status,
  qualification,
  award,
  document,
  category,
  calendar,
  event,
  schedule,
  announcement,
  message,
  setting,
  form,
  tag,
  field,
  submission,
  task,
  comment,
  image,
  attachment,
  newsfeedItem,
  webhook,
  webhookDelivery,
  automation,
  automationRun,
  role,
  oauthClient,
  apiKey,
  signInLink,
  ...links,
];

const byName = new Map(resources.map((r) => [r.name, r]));

export function resourceNamed(name: string): ResourceDef {
  const def = byName.get(name);
  if (!def) throw new Error(`Unknown resource "${name}"`);
  return def;
}

export const byMorphClass = new Map(resources.filter((r) => !r.link).map((r) => [r.morphClass, r]));

/** The resource describing a many-to-many relation's link rows (`CategoryForm`, `StatusRecord`, ...). */
export const linkResourceOf = (pivot: PivotDef) =>
  resourceNamed(pivot.model.charAt(0).toLowerCase() + pivot.model.slice(1));

/** Resources that can own a polymorphic child of `target` (e.g. everything with comments). */
export const morphOwnersOf = (target: string) =>
  resources.filter((r) =>
    Object.values(r.relations).some(
      (rel) => (rel.kind === "morphOne" || rel.kind === "morphMany") && rel.target === target,
    ),
  );
