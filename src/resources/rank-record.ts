import { belongsTo, defineResource, oneOf, ref } from "./define.ts";
import { rankRecordType } from "./enums.ts";
import { nameOf, recordFields, recordHooks, recordIncludes, recordOrder, recordRelations } from "./records.ts";

export const rankRecordTypes = ["Promotion", "Demotion", "Lateral", "Transfer"];

export default defineResource({
  name: "rankRecord",
  model: "RankRecord",
  path: "rank-records",
  fields: {
    ...recordFields(),
    rankId: ref("rank", { required: true }),
    type: oneOf(rankRecordType, { required: true }),
  },
  relations: { ...recordRelations(), rank: belongsTo({ target: "rank", foreignKey: "rankId" }) },
  includes: [...recordIncludes, "rank", "rank.image"],
  orderBy: recordOrder,
  hooks: recordHooks(
    "RankRecord",
    async (user, row, tx) => {
      const rank = await nameOf(tx, "Rank", row.rankId);
      return `${user} received a ${rankRecordTypes[row.type]?.toLowerCase() ?? "rank change"}${rank ? ` to ${rank}` : ""}`;
    },
    async (row, writes) => {
      // userId is required on create: always set here.
      if (row.rankId != null && row.userId != null) await writes.update("user", row.userId, { rankId: row.rankId });
    },
  ),
});
