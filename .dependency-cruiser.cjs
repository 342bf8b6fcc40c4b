/**
 * The layers of src/, bottom first: each may import only those below it (docs/architecture.md, "Layers"). `npm run
 * lint` runs this, so an upward import or an import cycle (type imports included) fails CI.
 */
const layers = [
  "core",
  "db",
  "files",
  "request",
  "resources",
  "data",
  "events",
  "auth",
  "seed",
  "graphql",
  "rest",
  "openapi",
  "http",
  "server",
  "cli",
];

module.exports = {
  forbidden: [
    {
      name: "no-cycle",
      comment: "Modules import each other in a loop (type imports count): move what both need below both.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    ...layers.map((layer, index) => ({
      name: `layer-${layer}`,
      comment: `src/${layer} imports only the layers below it: ${layers.slice(0, index).join(", ") || "none"}.`,
      severity: "error",
      from: { path: `^src/${layer}/` },
      to: { path: `^src/(${layers.slice(index + 1).join("|") || "$^"})/` },
    })),
    {
      name: "layered-folders-only",
      comment: "Every module of src/ belongs to a layer (or is generated).",
      severity: "error",
      from: { path: "^src/", pathNot: `^src/(${layers.join("|")}|generated)/` },
      to: {},
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: ["node_modules", "^src/generated/"] },
    exclude: { path: "^src/generated/" },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
