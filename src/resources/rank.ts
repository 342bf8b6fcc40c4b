import { defineResource, morphOne, order, string, text } from "./define.ts";
import { imageRoute } from "./routes.ts";

export default defineResource({
  name: "rank",
  model: "Rank",
  path: "ranks",
  fields: {
    name: string({ required: true }),
    description: text(),
    abbreviation: string({ nullable: true }),
    paygrade: string({ nullable: true }),
    order: order(),
  },
  relations: { image: morphOne({ target: "image" }) },
  includes: ["image"],
  orderBy: [{ order: "asc" }, { id: "asc" }],
  nested: [imageRoute()],
});
