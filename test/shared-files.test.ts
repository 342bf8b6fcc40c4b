import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createApiKey } from "../src/auth/accounts.ts";
import { loadConfig } from "../src/core/config.ts";
import { openDatabase } from "../src/db/prisma.ts";
import { spawnServer, type ServerProcess } from "./support/spawn-server.ts";

// Two instances behind a load balancer: two server processes on one database (the same SQLite file, or the same
// PostgreSQL database), each with a storage directory of its own, uploads in the database (STORAGE_DRIVER=database).
const png = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);
const gif = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");

let a: ServerProcess;
let b: ServerProcess;
let storageDirs: string[] = [];
let key: string;

beforeAll(async () => {
  storageDirs = [
    mkdtempSync(path.join(tmpdir(), "muster-files-a-")),
    mkdtempSync(path.join(tmpdir(), "muster-files-b-")),
  ];
  const env = { STORAGE_DRIVER: "database", NODE_ENV: "production" };
  a = await spawnServer({ ...env, STORAGE_DIR: storageDirs[0] });
  b = await spawnServer({ ...env, STORAGE_DIR: storageDirs[1], DATABASE_URL: a.databaseUrl });
  const db = await openDatabase(a.databaseUrl);
  try {
    key = (await createApiKey(db.store, { account: "shared", scopes: "*" })).key;
  } finally {
    await db.close();
  }
}, 120_000);

afterAll(async () => {
  // B first: stopping A drops the database both use.
  await b?.stop();
  await a?.stop();
  for (const dir of storageDirs) rmSync(dir, { recursive: true, force: true });
});

const form = (fields: Record<string, string | [Buffer, string, string]>) => {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === "string") data.append(name, value);
    else data.append(name, new Blob([new Uint8Array(value[0])], { type: value[1] }), value[2]);
  }
  return data;
};

/** A REST call to one instance. */
const call = async (server: ServerProcess, method: string, url: string, body?: FormData | object) => {
  const response = await fetch(`${server.base}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      accept: "application/json",
      ...(body && !(body instanceof FormData) ? { "content-type": "application/json" } : {}),
    },
    body: body instanceof FormData ? body : body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
};

/** A file URL's path fetched from one instance, whichever instance's address the URL names. */
const download = async (server: ServerProcess, url: string, method = "GET") => {
  const response = await fetch(`${server.base}${new URL(url).pathname}`, { method });
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    length: response.headers.get("content-length"),
    nosniff: response.headers.get("x-content-type-options"),
    bytes: Buffer.from(await response.arrayBuffer()),
  };
};

const filesOnDisk = () =>
  storageDirs.flatMap((dir) => (existsSync(dir) ? readdirSync(dir, { recursive: true, encoding: "utf8" }) : []));

test("an image uploaded through A is served by B; replaced through B, A serves the new one and 404s the old", async () => {
  const created = await call(a, "POST", "/v2/images", form({ name: "Crest", image: [png, "image/png", "crest.png"] }));
  expect(created.status).toBe(200);
  const image = created.body.data;
  expect(image.image_url).toMatch(/\/files\/images\/[\w-]+\.png$/);
  expect(await download(b, image.image_url)).toEqual({
    status: 200,
    type: "image/png",
    length: String(png.length),
    nosniff: "nosniff",
    bytes: png,
  });
  expect(await download(b, image.image_url, "HEAD")).toEqual({
    status: 200,
    type: "image/png",
    length: String(png.length),
    nosniff: "nosniff",
    bytes: Buffer.alloc(0),
  });

  const replaced = await call(
    b,
    "POST",
    `/v2/images/${image.id}`,
    form({ _method: "PATCH", image: [gif, "image/gif", "crest.gif"] }),
  );
  expect(replaced.status).toBe(200);
  expect(replaced.body.data.image_url).not.toBe(image.image_url);
  expect(await download(a, replaced.body.data.image_url)).toMatchObject({ status: 200, type: "image/gif", bytes: gif });
  const old = await download(a, image.image_url);
  expect(old.status).toBe(404);
  expect(JSON.parse(old.bytes.toString()).error).toMatchObject({ type: "NotFoundHttpException" });

  expect((await call(b, "DELETE", `/v2/images/${image.id}`)).status).toBe(200);
  expect((await download(a, replaced.body.data.image_url)).status).toBe(404);
  expect((await download(b, replaced.body.data.image_url)).status).toBe(404);
  expect(filesOnDisk()).toEqual([]);
});

test("a user's photo and an owner's image stored through A are deleted with their records through B", async () => {
  const user = (
    await call(
      a,
      "POST",
      "/v2/users",
      form({ name: "Ann", email: "ann@example.com", profile_photo: [png, "image/png", "ann.png"] }),
    )
  ).body.data;
  expect(await download(b, user.profile_photo_url)).toMatchObject({ status: 200, type: "image/png", bytes: png });
  const rank = (await call(a, "POST", "/v2/ranks", { name: "Sergeant" })).body.data;
  const chevrons = (
    await call(
      a,
      "POST",
      `/v2/ranks/${rank.id}/image`,
      form({ name: "Chevrons", image: [gif, "image/gif", "sgt.gif"] }),
    )
  ).body.data;
  expect(await download(b, chevrons.image_url)).toMatchObject({ status: 200, type: "image/gif", bytes: gif });
  const attachment = (
    await call(
      a,
      "POST",
      "/v2/attachments",
      form({ name: "Orders", file: [Buffer.from("%PDF-1.4\n"), "application/pdf", "orders.pdf"] }),
    )
  ).body.data;
  expect(await download(b, attachment.attachment_url)).toMatchObject({
    status: 200,
    type: "application/octet-stream",
    bytes: Buffer.from("%PDF-1.4\n"),
  });

  expect((await call(b, "DELETE", `/v2/users/${user.id}`)).status).toBe(200);
  expect((await call(b, "DELETE", `/v2/ranks/${rank.id}`)).status).toBe(200);
  expect((await call(b, "DELETE", `/v2/attachments/${attachment.id}`)).status).toBe(200);
  for (const url of [user.profile_photo_url, chevrons.image_url, attachment.attachment_url])
    expect((await download(a, url)).status, url).toBe(404);
  expect(filesOnDisk()).toEqual([]);

  const db = await openDatabase(a.databaseUrl);
  try {
    expect(await db.prisma.storedFile.count()).toBe(0);
  } finally {
    await db.close();
  }
});

test("STORAGE_DRIVER is disk unless set to database; anything else stops the start", () => {
  expect(loadConfig({}).storageDriver).toBe("disk");
  expect(loadConfig({ STORAGE_DRIVER: "database" }).storageDriver).toBe("database");
  expect(() => loadConfig({ STORAGE_DRIVER: "s3" })).toThrow(/STORAGE_DRIVER must be one of disk, database/);
});
