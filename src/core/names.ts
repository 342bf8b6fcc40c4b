/** Name conversions between the registry (camelCase), GraphQL (camel/Pascal) and REST (snake_case). */
export const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
export const camel = (s: string) => s.replace(/[_-]([a-z0-9])/g, (_, c: string) => c.toUpperCase());
export const snake = (s: string) => s.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
/** "isPublic" → "is public", as Laravel names attributes in messages. */
/** The internal root field a REST operation runs (`restCreateRank`): the public graph keeps the plain names for itself. */
export const restRootField = (operationField: string) => `rest${pascal(operationField)}`;
/** "rank records" for a resource's plural (`rankRecords`, `statuses`), as descriptions word it. */
export const pluralWords = (def: { plural: string }) => def.plural.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
/** "a rank", "an image": the indefinite article a noun takes. */
export const withArticle = (noun: string) => `${/^[aeiou]/i.test(noun) ? "an" : "a"} ${noun}`;
export const human = (s: string) => snake(s).replace(/_/g, " ");
