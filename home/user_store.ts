/**
 * The users, one JSON document in the server's storage (engine/contracts/storage.ts): `conf/users.json` of
 * the home with the files backend, the key `conf/users.json` of a KV shared by several servers.
 * The CLI or another server changes it while a server runs; the server asks the storage for the
 * document's version on each authentication (with files a synchronous stat, about 4 µs; with KV one
 * read) and reloads it when it changed, so a removed user or replaced token is refused from the
 * moment the command has returned, on every server. Changes are compare-and-swap on that version,
 * retried from the new document when another writer came first, so no writer's change is lost.
 */

import { basename, dirname, join } from "node:path";
import { z } from "zod";
import { type HomeLayout } from "./layout.ts";
import { type Storage, StorageError, type StorageKey } from "../engine/contracts/storage.ts";
import { FileStorage } from "./storage/file_storage.ts";
import {
  hashBytes,
  hashToken,
  hashTokenBytes,
  newToken,
  sameHashBytes,
  TOKEN_PATTERN,
} from "./tokens.ts";
import { isValidZone } from "../engine/values/time.ts";
import { isValidName, NAME_PATTERN } from "./users.ts";
import { type User } from "../engine/contracts/user.ts";

/** A request to the store that cannot be carried out (bad name, unknown user, duplicate). */
export class UserStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UserStoreError";
  }
}

const storedUserSchema = z.object({
  name: z.string().refine(isValidName, "not a valid user name"),
  groups: z.array(z.string().refine(isValidName, "not a valid group name")),
  admin: z.boolean(),
  timeZone: z.string().refine(isValidZone, "not a time zone").optional(),
  tokenHash: z.string().regex(/^[0-9a-f]{64}$/, "not a SHA-256 hex hash"),
});
const usersFileSchema = z.object({ users: z.array(storedUserSchema) });

type StoredUser = z.infer<typeof storedUserSchema>;

export interface NewUser {
  readonly admin?: boolean;
  readonly groups?: readonly string[];
  readonly timeZone?: string;
}

function publicUser({ name, groups, admin, timeZone }: StoredUser): User {
  return timeZone === undefined ? { name, groups, admin } : { name, groups, admin, timeZone };
}

function checkName(kind: string, name: string): void {
  if (!isValidName(name)) {
    throw new UserStoreError(
      `${kind} name '${name}' is not valid: expected 1 to 64 of A-Z a-z 0-9 _ . - (${NAME_PATTERN.source}), not '.' or '..'`,
    );
  }
}

/** The key of the users document in a home's storage. */
export const USERS_KEY: StorageKey = ["conf", "users.json"];

/** Writers that keep meeting a newer document give up after this many attempts. */
const MUTATE_ATTEMPTS = 50;

export class UserStore {
  #users: readonly StoredUser[] = [];
  /** The users' token hashes as bytes, index for index; decoded when the users are set. */
  #hashes: readonly Uint8Array[] = [];
  /** Version of the document last loaded; undefined before the first load, null when missing. */
  #version: string | null | undefined = undefined;
  #loading: Promise<void> | null = null;
  readonly #storage: Storage;
  readonly #key: StorageKey;
  /** How messages name the document: the file's path, or the key in a KV. */
  readonly file: string;
  /** Users whose folder this process made sure of (users shared through a KV: see authenticate). */
  readonly #folders = new Set<string>();

  /**
   * The users of `file` (a path: the files backend), or of `USERS_KEY` in `storage`.
   * `usersDir`, when given, is where each new user gets their folder (`<home>/data/users`), or
   * what makes a user's folder (in a resource tree kept in the storage).
   */
  constructor(
    file: string | Storage,
    private readonly usersDir?: string | ((name: string) => Promise<void>),
  ) {
    if (typeof file === "string") {
      this.#storage = new FileStorage(dirname(file));
      this.#key = [basename(file)];
      this.file = file;
    } else {
      this.#storage = file;
      this.#key = USERS_KEY;
      this.file = file.kind === "files"
        ? join(...USERS_KEY)
        : `${USERS_KEY.join("/")} (${file.kind})`;
    }
  }

  /** The store of a home: its users.json (or the KV's), with folders under data/users. */
  static forHome(
    home: HomeLayout,
    storage?: Storage,
    makeFolder?: (name: string) => Promise<void>,
  ): UserStore {
    const folders = makeFolder ?? join(home.dataDir, "users");
    return storage === undefined || storage.kind === "files"
      ? new UserStore(home.usersFile, folders)
      : new UserStore(storage, folders);
  }

  /** Makes sure of a user's folder. */
  async #makeFolder(name: string): Promise<void> {
    if (typeof this.usersDir === "function") await this.usersDir(name);
    else if (this.usersDir !== undefined) {
      await Deno.mkdir(join(this.usersDir, name), { recursive: true });
    }
  }

  /** Do the users exist yet? (A home without them is a fresh home.) */
  async exists(): Promise<boolean> {
    return (await this.#storage.version(this.#key)) !== null;
  }

  /** Adds a user and returns their new token (the only time it is seen). */
  async add(name: string, options: NewUser = {}): Promise<string> {
    checkName("user", name);
    const groups = [...new Set(options.groups ?? [])];
    groups.forEach((group) => checkName("group", group));
    if (options.timeZone !== undefined && !isValidZone(options.timeZone)) {
      throw new UserStoreError(
        `time zone '${options.timeZone}' is not valid: expected an IANA zone such as 'Europe/Berlin'`,
      );
    }
    const token = newToken();
    await this.#mutate((users) => {
      if (users.some((u) => u.name === name)) {
        throw new UserStoreError(`user '${name}' already exists`);
      }
      const user: StoredUser = {
        name,
        groups,
        admin: options.admin ?? false,
        ...(options.timeZone !== undefined ? { timeZone: options.timeZone } : {}),
        tokenHash: hashToken(token),
      };
      return [...users, user];
    });
    await this.#makeFolder(name);
    return token;
  }

  /**
   * Adds the first admin only when there are no users at all (a fresh home or KV), with a new
   * token or the one `given` (the edge entry's TRAWL_BOOTSTRAP_TOKEN); returns the token, or undefined when another server or process created the users first.
   */
  async bootstrapAdmin(name = "admin", given?: string): Promise<string | undefined> {
    if (given !== undefined && !TOKEN_PATTERN.test(given)) {
      throw new UserStoreError(
        "the admin's token must be 'trawl_' and 43 characters of A-Z a-z 0-9 _ - (as tokens are made)",
      );
    }
    const token = given ?? newToken();
    const users: StoredUser[] = [{ name, groups: [], admin: true, tokenHash: hashToken(token) }];
    const result = await this.#storage.put(this.#key, encodeUsers(users), {
      expectedVersion: null,
    });
    if (!result.ok) return undefined;
    this.#version = undefined;
    await this.#makeFolder(name);
    return token;
  }

  /** All users, in the order they were added. */
  async list(): Promise<User[]> {
    return (await this.#read()).map(publicUser);
  }

  /** The user called `name`, or undefined. */
  async get(name: string): Promise<User | undefined> {
    const user = (await this.#read()).find((u) => u.name === name);
    return user && publicUser(user);
  }

  /** Removes a user (their folder under /users stays). */
  async remove(name: string): Promise<void> {
    await this.#mutate((users) => {
      if (!users.some((u) => u.name === name)) throw new UserStoreError(`no user '${name}'`);
      return users.filter((u) => u.name !== name);
    });
  }

  /** Gives a user a new token, which invalidates the old one; returns the new token. */
  async replaceToken(name: string): Promise<string> {
    const token = newToken();
    const tokenHash = hashToken(token);
    await this.#mutate((users) => {
      if (!users.some((u) => u.name === name)) throw new UserStoreError(`no user '${name}'`);
      return users.map((u) => u.name === name ? { ...u, tokenHash } : u);
    });
    return token;
  }

  /** The user a token belongs to, or undefined. Sees changes other processes made. */
  async authenticate(token: string): Promise<User | undefined> {
    if (!TOKEN_PATTERN.test(token)) return undefined;
    await this.#refresh();
    const hash = hashTokenBytes(token);
    let found: StoredUser | undefined;
    // Compare with every user, so the time taken does not tell which one matched.
    const users = this.#users;
    const hashes = this.#hashes;
    for (let i = 0; i < users.length; i++) if (sameHashBytes(hash, hashes[i]!)) found = users[i];
    if (found === undefined) return undefined;
    // A user added through another server of a shared KV has no folder on this one's disk yet.
    if (this.#storage.kind !== "files" && this.usersDir !== undefined) {
      if (!this.#folders.has(found.name)) {
        await this.#makeFolder(found.name);
        this.#folders.add(found.name);
      }
    }
    return publicUser(found);
  }

  /** Reloads the cached users when the document changed since the last load. */
  async #refresh(): Promise<void> {
    while (this.#loading) await this.#loading;
    const version = await this.#storage.version(this.#key);
    if (version === this.#version) return;
    this.#loading = this.#load().then(() => {}).finally(() => {
      this.#loading = null;
    });
    await this.#loading;
  }

  /** Loads the document and its version together. */
  async #load(): Promise<string | null> {
    const stored = await this.#storage.get(this.#key);
    this.#setUsers(stored === null ? [] : this.#parse(new TextDecoder().decode(stored.value)));
    this.#version = stored?.version ?? null;
    return this.#version;
  }

  /** The users as stored now (mutations always start from the storage, not a cache). */
  async #read(): Promise<readonly StoredUser[]> {
    await this.#refresh();
    return this.#users;
  }

  /** Applies `change` to the stored users; starts again from the new users on a conflict. */
  async #mutate(change: (users: readonly StoredUser[]) => readonly StoredUser[]): Promise<void> {
    for (let attempt = 0; attempt < MUTATE_ATTEMPTS; attempt++) {
      const version = await this.#load();
      const users = change(this.#users);
      const result = await this.#storage.put(this.#key, encodeUsers(users), {
        expectedVersion: version,
      });
      if (result.ok) {
        this.#setUsers(users);
        this.#version = result.version;
        return;
      }
    }
    throw new UserStoreError(`${this.file} kept changing under this change; try again`);
  }

  #setUsers(users: readonly StoredUser[]): void {
    this.#users = users;
    this.#hashes = users.map((u) => hashBytes(u.tokenHash));
  }

  /**
   * The users of the stored document. A corrupt one is the storage's failure, not a bug (a
   * StorageError: `503 STORAGE_UNAVAILABLE` to every request that needs a user): its public
   * message names the document and what is wrong, without a host path.
   */
  #parse(text: string): StoredUser[] {
    const corrupt = (what: string, detail: string) =>
      new StorageError(`${this.file} is ${what}: ${detail}`, {
        publicMessage: `the users document ${USERS_KEY.join("/")} is ${what} (${detail}); ` +
          "repair it or restore it from a backup",
      });
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw corrupt("not valid JSON", (e as Error).message);
    }
    const parsed = usersFileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw corrupt("not a valid users file", `${issue!.path.join(".")}: ${issue!.message}`);
    }
    return parsed.data.users;
  }
}

function encodeUsers(users: readonly StoredUser[]): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ users }, null, 2) + "\n");
}
