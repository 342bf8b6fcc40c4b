/** pg's conversion of a JavaScript value into a statement parameter (used by its own Query), for our submittable. */
declare module "pg/lib/utils.js" {
  const utils: { prepareValue(value: unknown): unknown };
  export default utils;
}
