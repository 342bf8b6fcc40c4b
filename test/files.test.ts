import { existsSync, readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { storageDrivers } from "../src/core/config.ts";
import { client, startHarness, type Client, type Harness } from "./harness.ts";

// A 1×1 PNG and a GIF: real image signatures, so the type checks accept them.
const png = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);
const gif = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");

const form = (fields: Record<string, string | Blob | [Blob, string]>) => {
  const data = new FormData();
  for (const [key, value] of Object.entries(fields)) {
    if (Array.isArray(value)) data.append(key, value[0], value[1]);
    else data.append(key, value);
  }
  return data;
};
const imageFile = (bytes: Buffer, type: string) => new Blob([new Uint8Array(bytes)], { type });

/** Files on disk under `dir`, recursively. */
const filesUnder = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => e.name)
    : [];

// Every test runs with each storage driver: uploads on this instance's disk, or in the database.
describe.each(storageDrivers)("STORAGE_DRIVER=%s", (driver) => {
  let h: Harness;
  let api: Client;
  /** Fetches a file URL the way a client would: by its absolute address, with no key. */
  const download = async (url: string) => {
    const response = await h.app.yoga.fetch(url);
    return {
      status: response.status,
      type: response.headers.get("content-type"),
      bytes: Buffer.from(await response.arrayBuffer()),
    };
  };
  /** How many files the driver holds: on disk under STORAGE_DIR, or rows of StoredFile; the other place stays empty. */
  const storedCount = async () => {
    const onDisk = filesUnder(h.config.storageDir).length;
    const inDatabase = await h.db.prisma.storedFile.count();
    expect(driver === "disk" ? inDatabase : onDisk).toBe(0);
    return driver === "disk" ? onDisk : inDatabase;
  };

  beforeAll(async () => {
    h = await startHarness({ storageDriver: driver });
    api = client(h, await h.key());
  });
  afterAll(() => h.close());

  describe("image uploads", () => {
    test("upload as multipart, fetch by its absolute URL, replace with _method=PATCH, delete", async () => {
      const stored = await storedCount();
      const created = await api.post(
        "/v2/images",
        form({ name: "Crest", image: [imageFile(png, "image/png"), "crest.png"] }),
      );
      expect(created.status).toBe(200);
      const image = created.body.data;
      expect(image).toMatchObject({ name: "Crest", filename: "crest.png" });
      expect(image.image_url).toMatch(/^http:\/\/muster\.test\/files\/images\/[\w-]+\.png$/);
      expect(await download(image.image_url)).toEqual({ status: 200, type: "image/png", bytes: png });
      expect(await storedCount()).toBe(stored + 1);

      const replaced = await api.post(
        `/v2/images/${image.id}`,
        form({ _method: "PATCH", image: [imageFile(gif, "image/gif"), "crest.gif"] }),
      );
      expect(replaced.status).toBe(200);
      expect(replaced.body.data).toMatchObject({ id: image.id, name: "Crest", filename: "crest.gif" });
      expect(replaced.body.data.image_url).not.toBe(image.image_url);
      expect((await download(replaced.body.data.image_url)).bytes).toEqual(gif);
      expect((await download(image.image_url)).status).toBe(404);
      expect(await storedCount()).toBe(stored + 1);

      expect((await api.delete(`/v2/images/${image.id}`)).status).toBe(200);
      expect((await download(replaced.body.data.image_url)).status).toBe(404);
      expect(await storedCount()).toBe(stored);
    });

    test("a 20 MB upload is 413 and a non-image is 422, in the error shape, storing nothing", async () => {
      const stored = await storedCount();
      const before = (await api.get("/v2/images")).body.meta.total;
      const huge = await api.post(
        "/v2/images",
        form({ name: "Huge", image: [imageFile(Buffer.alloc(20 * 1024 * 1024, 1), "image/png"), "huge.png"] }),
      );
      expect(huge.status).toBe(413);
      expect(huge.body.error).toMatchObject({ type: "HttpException" });
      expect(huge.body.error.message).toBeTruthy();

      const text = await api.post(
        "/v2/images",
        form({
          name: "Fake",
          image: [imageFile(Buffer.from("just some text, not a picture"), "image/png"), "fake.png"],
        }),
      );
      expect(text.status).toBe(422);
      expect(text.body.error.type).toBe("ValidationException");
      expect(text.body.error.errors.image).toEqual(["The image field must be an image."]);

      const missing = await api.post("/v2/images", form({ name: "No file" }));
      expect(missing.status).toBe(422);
      expect(missing.body.error.errors.image).toEqual(["The image field is required."]);
      expect((await api.get("/v2/images")).body.meta.total).toBe(before);
      expect(await storedCount()).toBe(stored);
    });

    test("a rank's image sub-resource: create, fetch without an Accept header, second create is 409, delete removes the file", async () => {
      const rank = (await api.post("/v2/ranks", { name: "Sergeant" })).body.data;
      const created = await api.post(
        `/v2/ranks/${rank.id}/image`,
        form({ name: "Chevrons", image: [imageFile(png, "image/png"), "sgt.png"] }),
      );
      expect(created.status).toBe(200);
      expect(created.body.data).toMatchObject({ model_type: "App\\Models\\Rank", model_id: rank.id });

      const plain = await h.app.yoga.fetch(`http://muster.test/v2/ranks/${rank.id}/image`, {
        headers: { authorization: `Bearer ${await h.key()}` },
      });
      expect(plain.status).toBe(200);
      expect(plain.headers.get("content-type")).toMatch(/^application\/json/);
      expect((await plain.json()).data.id).toBe(created.body.data.id);

      const stored = await storedCount();
      const again = await api.post(
        `/v2/ranks/${rank.id}/image`,
        form({ name: "Again", image: [imageFile(png, "image/png"), "again.png"] }),
      );
      expect(again.status).toBe(409);
      expect(await storedCount()).toBe(stored);

      expect((await api.get(`/v2/ranks/${rank.id}?include=image`)).body.data.image.image_url).toBe(
        created.body.data.image_url,
      );
      expect((await api.delete(`/v2/ranks/${rank.id}/image`)).status).toBe(200);
      expect((await download(created.body.data.image_url)).status).toBe(404);
      expect(await storedCount()).toBe(stored - 1);
      expect((await api.get(`/v2/ranks/${rank.id}/image`)).status).toBe(404);
    });

    test("deleting the owner deletes its image file", async () => {
      const award = (await api.post("/v2/awards", { name: "Medal" })).body.data;
      const stored = await storedCount();
      const image = (
        await api.post(
          `/v2/awards/${award.id}/image`,
          form({ name: "Medal", image: [imageFile(png, "image/png"), "medal.png"] }),
        )
      ).body.data;
      expect((await download(image.image_url)).status).toBe(200);
      expect(await storedCount()).toBe(stored + 1);
      expect((await api.delete(`/v2/awards/${award.id}`)).status).toBe(200);
      expect((await download(image.image_url)).status).toBe(404);
      expect(await storedCount()).toBe(stored);
    });

    test("a user's photos: stored, replaced, removed with null, removed with the user", async () => {
      const stored = await storedCount();
      const created = await api.post(
        "/v2/users",
        form({
          name: "Dee",
          email: "dee@example.com",
          profile_photo: [imageFile(png, "image/png"), "me.png"],
          cover_photo: [imageFile(gif, "image/gif"), "cover.gif"],
        }),
      );
      expect(created.status).toBe(200);
      const user = created.body.data;
      expect(user.profile_photo_url).toMatch(/^http:\/\/muster\.test\/files\/profile-photos\/[\w-]+\.png$/);
      expect(await download(user.cover_photo_url)).toEqual({ status: 200, type: "image/gif", bytes: gif });
      expect(await storedCount()).toBe(stored + 2);

      const replaced = (
        await api.post(
          `/v2/users/${user.id}`,
          form({ _method: "PATCH", profile_photo: [imageFile(gif, "image/gif"), "me.gif"] }),
        )
      ).body.data;
      expect((await download(replaced.profile_photo_url)).bytes).toEqual(gif);
      expect((await download(user.profile_photo_url)).status).toBe(404);
      expect(await storedCount()).toBe(stored + 2);

      expect((await api.patch(`/v2/users/${user.id}`, { cover_photo: null })).status).toBe(200);
      expect((await download(user.cover_photo_url)).status).toBe(404);
      expect(await storedCount()).toBe(stored + 1);

      expect((await api.delete(`/v2/users/${user.id}`)).status).toBe(200);
      expect((await download(replaced.profile_photo_url)).status).toBe(404);
      expect(await storedCount()).toBe(stored);
    });

    test("a batch that fails after storing a file leaves no file behind", async () => {
      const stored = await storedCount();
      const users = (await api.get("/v2/users")).body.meta.total;
      const photo = `data:image/png;base64,${png.toString("base64")}`;
      const failed = await api.post("/v2/users/batch", {
        resources: [
          { name: "Eve", email: "eve@example.com", profile_photo: photo },
          { name: "Fay", email: "fay@example.com", profile_photo: "data:image/png,not-a-png" },
        ],
      });
      expect(failed.status).toBe(422);
      expect(Object.keys(failed.body.error.errors)).toEqual(["resources.1.profile_photo"]);
      expect((await api.get("/v2/users")).body.meta.total).toBe(users);
      expect(await storedCount()).toBe(stored);
    });

    test("a stored file's headers; HEAD answers them without a body; a missing or escaping path is 404 in the error shape", async () => {
      const image = (
        await api.post("/v2/images", form({ name: "Head", image: [imageFile(png, "image/png"), "head.png"] }))
      ).body.data;
      const head = await h.app.yoga.fetch(image.image_url, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(
        Object.fromEntries(
          ["content-type", "content-length", "x-content-type-options"].map((name) => [name, head.headers.get(name)]),
        ),
      ).toEqual({
        "content-type": "image/png",
        "content-length": String(png.length),
        "x-content-type-options": "nosniff",
      });
      expect(head.headers.get("content-security-policy")).toMatch(/sandbox/);
      expect((await head.arrayBuffer()).byteLength).toBe(0);
      for (const path of [
        "/files/images/nothing-here.png",
        "/files/%2e%2e/%2e%2e/etc/passwd",
        "/files/%E0%A4%A",
        "/files/images",
      ]) {
        const missing = await h.app.yoga.fetch(`http://muster.test${path}`);
        expect(missing.status, path).toBe(404);
        expect((await missing.json()).error).toMatchObject({ type: "NotFoundHttpException" });
      }
    });
  });

  describe("GraphQL multipart uploads", () => {
    /** A GraphQL multipart request: each file in `files` goes to its variable path. */
    const upload = async (query: string, variables: Record<string, unknown>, files: Record<string, [Blob, string]>) => {
      const body = new FormData();
      body.append("operations", JSON.stringify({ query, variables }));
      body.append("map", JSON.stringify(Object.fromEntries(Object.keys(files).map((path, i) => [i, [path]]))));
      Object.values(files).forEach(([blob, name], i) => body.append(String(i), blob, name));
      const response = await h.app.yoga.fetch("http://muster.test/graphql", {
        method: "POST",
        body,
        headers: { authorization: `Bearer ${await h.key()}`, "graphql-require-preflight": "1" },
      });
      return { status: response.status, body: await response.json() };
    };

    test("createImage with the file in its input stores it, as REST does; updateImage replaces it; deleteImage removes it", async () => {
      const stored = await storedCount();
      const created = await upload(
        "mutation($input: CreateImageInput!) { createImage(input: $input) { image { rowId name filename imageUrl } } }",
        { input: { name: "Badge", image: null } },
        { "variables.input.image": [imageFile(png, "image/png"), "badge.png"] },
      );
      expect(created.body.errors).toBeUndefined();
      const image = created.body.data.createImage.image;
      expect(image).toMatchObject({ name: "Badge", filename: "badge.png" });
      expect(await download(image.imageUrl)).toEqual({ status: 200, type: "image/png", bytes: png });
      expect(await storedCount()).toBe(stored + 1);
      // REST reads the same row and file.
      expect((await api.get(`/v2/images/${image.rowId}`)).body.data).toMatchObject({
        id: image.rowId,
        filename: "badge.png",
        image_url: image.imageUrl,
      });

      const replaced = await upload(
        "mutation($id: Int!, $input: ImagePatch!) { updateImage(rowId: $id, input: $input) { image { rowId name filename imageUrl } } }",
        { id: image.rowId, input: { image: null } },
        { "variables.input.image": [imageFile(gif, "image/gif"), "badge.gif"] },
      );
      expect(replaced.body.errors).toBeUndefined();
      const now = replaced.body.data.updateImage.image;
      expect(now).toMatchObject({ rowId: image.rowId, name: "Badge", filename: "badge.gif" });
      expect(now.imageUrl).not.toBe(image.imageUrl);
      expect((await download(now.imageUrl)).bytes).toEqual(gif);
      expect((await download(image.imageUrl)).status).toBe(404);
      expect(await storedCount()).toBe(stored + 1);

      const deleted = await api.graphql(`mutation { deleteImage(rowId: ${image.rowId}) { image { rowId } } }`);
      expect(deleted.body).toEqual({ data: { deleteImage: { image: { rowId: image.rowId } } } });
      expect((await download(now.imageUrl)).status).toBe(404);
      expect(await storedCount()).toBe(stored);
    });

    test("createAttachment takes any file; createUser takes its photos", async () => {
      const stored = await storedCount();
      const pdf = Buffer.from("%PDF-1.4\n% a tiny document\n");
      const attachment = await upload(
        "mutation($input: CreateAttachmentInput!) { createAttachment(input: $input) { attachment { name filename attachmentUrl } } }",
        { input: { name: "Orders", file: null } },
        { "variables.input.file": [new Blob([new Uint8Array(pdf)], { type: "application/pdf" }), "orders.pdf"] },
      );
      expect(attachment.body.errors).toBeUndefined();
      expect(attachment.body.data.createAttachment.attachment).toMatchObject({
        name: "Orders",
        filename: "orders.pdf",
      });
      expect((await download(attachment.body.data.createAttachment.attachment.attachmentUrl)).bytes).toEqual(pdf);

      const user = await upload(
        "mutation($input: CreateUserInput!) { createUser(input: $input) { user { profilePhotoUrl coverPhotoUrl } } }",
        { input: { name: "Gil", email: "gil@example.com", profilePhoto: null, coverPhoto: null } },
        {
          "variables.input.profilePhoto": [imageFile(png, "image/png"), "me.png"],
          "variables.input.coverPhoto": [imageFile(gif, "image/gif"), "cover.gif"],
        },
      );
      expect(user.body.errors).toBeUndefined();
      const photos = user.body.data.createUser.user;
      expect(photos.profilePhotoUrl).toMatch(/^http:\/\/muster\.test\/files\/profile-photos\/[\w-]+\.png$/);
      expect(await download(photos.coverPhotoUrl)).toEqual({ status: 200, type: "image/gif", bytes: gif });
      expect(await storedCount()).toBe(stored + 3);
    });

    test("a file that is not an image is a field error under its input path, HTTP 200, nothing stored", async () => {
      const stored = await storedCount();
      const before = (await api.get("/v2/images")).body.meta.total;
      const fake = await upload(
        "mutation($input: CreateImageInput!) { createImage(input: $input) { image { rowId } } }",
        { input: { name: "Fake", image: null } },
        { "variables.input.image": [imageFile(Buffer.from("just some text, not a picture"), "image/png"), "fake.png"] },
      );
      expect(fake.status).toBe(200);
      expect(fake.body.data).toEqual({ createImage: null });
      expect(fake.body.errors[0].extensions).toMatchObject({
        code: "VALIDATION",
        errors: { "input.image": ["The image field must be an image."] },
      });
      expect((await api.get("/v2/images")).body.meta.total).toBe(before);
      expect(await storedCount()).toBe(stored);
    });
  });

  describe("attachments", () => {
    test("any file type, downloadable by attachment_url, removed with the record", async () => {
      const pdf = Buffer.from("%PDF-1.4\n% a tiny document\n");
      const created = await api.post(
        "/v2/attachments",
        form({ name: "Orders", file: [new Blob([new Uint8Array(pdf)], { type: "application/pdf" }), "orders.pdf"] }),
      );
      expect(created.status).toBe(200);
      const attachment = created.body.data;
      expect(attachment).toMatchObject({ name: "Orders", filename: "orders.pdf" });
      expect(attachment.attachment_url).toMatch(/^http:\/\/muster\.test\/files\/attachments\/[\w-]+\.pdf$/);
      expect(await download(attachment.attachment_url)).toEqual({
        status: 200,
        type: "application/octet-stream",
        bytes: pdf,
      });
      const stored = await storedCount();
      expect((await api.delete(`/v2/attachments/${attachment.id}`)).status).toBe(200);
      expect((await download(attachment.attachment_url)).status).toBe(404);
      expect(await storedCount()).toBe(stored - 1);
    });
  });

  describe("v1", () => {
    test("single-record responses show status objects with text_color and bg_color; v2 and lists do not", async () => {
      const status = (await api.post("/v2/statuses", { name: "Active", color: "#16a34a" })).body.data;
      const user = (await api.post("/v2/users", { name: "Cy", email: "cy@example.com", status_id: status.id })).body
        .data;
      expect((await api.get(`/v1/statuses/${status.id}`)).body.data).toMatchObject({
        text_color: "#16a34a",
        bg_color: "#16a34a",
      });
      expect((await api.get(`/v1/users/${user.id}?include=status`)).body.data.status).toMatchObject({
        text_color: "#16a34a",
        bg_color: "#16a34a",
      });
      expect((await api.get(`/v2/statuses/${status.id}`)).body.data).not.toHaveProperty("text_color");
      expect((await api.get(`/v1/statuses`)).body.data[0]).not.toHaveProperty("text_color");
    });
  });
});
