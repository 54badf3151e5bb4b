/**
 * Datastore definitions over HTTP (docs/api.md, "Datastores"):
 *
 *   GET    /datastore-kinds      the kinds of store there are (type, secret and bound keys)
 *   GET    /datastores           the stores the caller may read
 *   GET    /datastores/<name>    the definition without the secret (`secretSet`), with an ETag
 *   PUT    /datastores/<name>    admins: validated as at query time; no secret keeps the stored one
 *                                (unless a key it is bound to changed: 400);
 *                                `If-Match` replaces only that version (else 412)
 *   DELETE /datastores/<name>    admins
 *   POST   /datastores/<name>/test  admins: a token per API, one cheap read per enabled family;
 *                                with a definition as body: that one, as PUT would store it, unsaved
 */

import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import {
  type DatastoreAdmin,
  DatastoreProblems,
  DefinitionChanged,
} from "../actors/datastore_admin.ts";
import { ApiError, badRequest, forbidden, notFound } from "./errors.ts";
import type { AppEnv } from "./env.ts";
import { sendJson } from "./json.ts";

/** A definition is small; anything larger is a mistake. */
const MAX_DEFINITION_BYTES = 64 * 1024;

/** A definition's body is at most MAX_DEFINITION_BYTES (413 past it). */
const definitionLimit = bodyLimit({
  maxSize: MAX_DEFINITION_BYTES,
  onError: () => {
    throw new ApiError(
      413,
      "PAYLOAD_TOO_LARGE",
      `a datastore definition is at most ${MAX_DEFINITION_BYTES} bytes`,
    );
  },
});

/** The body as JSON, or 400 BAD_DATASTORE naming the store. */
function definitionJson(name: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest("BAD_DATASTORE", `datastore '${name}': the body is not valid JSON`, {
      problems: ["the body is not valid JSON"],
    });
  }
}

export function datastoreRoutes(admin: DatastoreAdmin): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get("/datastore-kinds", (c) => sendJson(c, admin.describeKinds()));

  app.get("/datastores", async (c) => sendJson(c, await admin.list(c.get("user"))));

  app.get("/datastores/:name", async (c) => {
    const name = c.req.param("name");
    const definition = await admin.get(c.get("user"), name);
    if (!definition) throw notFound(`no such datastore: ${name.slice(0, 80)}`);
    const etag = await admin.etag(c.get("user"), name);
    return sendJson(c, definition, 200, etag === null ? {} : { ETag: etag });
  });

  app.put(
    "/datastores/:name",
    definitionLimit,
    async (c) => {
      if (!c.get("user").admin) throw forbidden("only admins may define datastores");
      const name = c.req.param("name");
      const json = definitionJson(name, await c.req.text());
      try {
        const { created, etag } = await admin.put(name, json, c.req.header("If-Match"));
        return sendJson(c, (await admin.get(c.get("user"), name))!, created ? 201 : 200, {
          ETag: etag,
        });
      } catch (e) {
        if (e instanceof DefinitionChanged) {
          throw new ApiError(412, "PRECONDITION_FAILED", e.message);
        }
        if (!(e instanceof DatastoreProblems)) throw e;
        throw badRequest("BAD_DATASTORE", e.message, { problems: e.problems });
      }
    },
  );

  app.delete("/datastores/:name", async (c) => {
    if (!c.get("user").admin) throw forbidden("only admins may remove datastores");
    const name = c.req.param("name");
    if (!(await admin.remove(name))) throw notFound(`no such datastore: ${name.slice(0, 80)}`);
    return c.body(null, 204);
  });

  app.post(
    "/datastores/:name/test",
    definitionLimit,
    async (c) => {
      if (!c.get("user").admin) throw forbidden("only admins may test datastores");
      const name = c.req.param("name");
      // A body is a definition to test as it would be saved, without saving it; none: the stored.
      const text = await c.req.text();
      const json = text.trim() === "" ? undefined : definitionJson(name, text);
      try {
        const families = json === undefined
          ? await admin.test(name)
          : await admin.testDefinition(name, json);
        if (!families) throw notFound(`no such datastore: ${name.slice(0, 80)}`);
        return sendJson(c, { families });
      } catch (e) {
        if (!(e instanceof DatastoreProblems)) throw e;
        throw badRequest("BAD_DATASTORE", e.message, { problems: e.problems });
      }
    },
  );

  return app;
}
