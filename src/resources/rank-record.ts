import { belongsTo, defineResource, ref } from "./define.ts";
import { recordFields, recordIncludes, recordOrder, recordRelations } from "./records.ts";
import { addNewsfeedItem } from "./newsfeed.ts";

export const rankRecordTypes = ["Promotion", "Demotion", "Lateral", "Transfer"];

export default defineResource({
  name: "rankRecord",
  model: "RankRecord",
  path: "rank-records",
  fields: {
    ...recordFields(),
    rankId: ref("rank", { required: true }),
    type: { type: "int", required: true, oneOf: [0, 1, 2, 3] },
  },
  relations: { ...recordRelations(), rank: belongsTo("rank", "rankId") },
  includes: [...recordIncludes, "rank", "rank.image"],
  orderBy: recordOrder,
  hooks: {
    async afterCreate({ row, ctx, tx }) {
      if (row.rankId != null) await tx.user.update({ where: { id: row.userId }, data: { rankId: row.rankId } });
      const [user, rank] = await Promise.all([
        tx.user.findUnique({ where: { id: row.userId }, select: { name: true } }),
        row.rankId != null ? tx.rank.findUnique({ where: { id: row.rankId }, select: { name: true } }) : null,
      ]);
      await addNewsfeedItem(tx, ctx, {
        event: "created", subjectType: "App\\Models\\RankRecord", subjectId: row.id,
        description: "created",
        headline: `${user?.name ?? "A user"} received a ${rankRecordTypes[row.type]?.toLowerCase() ?? "rank change"}${rank ? ` to ${rank.name}` : ""}`,
        text: row.text ?? null,
      });
    },
  },
});
