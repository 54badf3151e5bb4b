/**
 * The users in `conf/users.json`. The CLI changes the file while a server may be running; the
 * server stats the file on each authentication (one cheap syscall) and reloads it when its
 * identity, size or mtime changed, so changes take effect without a restart, and a removed user
 * or replaced token is refused from the moment the CLI command has returned. The stat is a
 * synchronous one: about 4 µs, where the asynchronous op costs some 50 µs of round trip through
 * the thread pool on every request.
 */

import { join } from "node:path";
import { z } from "zod";
import { fileVersion, fileVersionSync } from "./file_version.ts";
import { type HomeLayout, readTextIfExists } from "./layout.ts";
import { writeFileAtomic } from "../engine/fs/atomic_write.ts";
import {
  hashBytes,
  hashToken,
  hashTokenBytes,
  newToken,
  sameHashBytes,
  TOKEN_PATTERN,
} from "./tokens.ts";
import { isValidZone } from "../engine/time.ts";
import { isValidName, NAME_PATTERN } from "./users.ts";
import { type User } from "../engine/user.ts";

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

export class UserStore {
  #users: readonly StoredUser[] = [];
  /** The users' token hashes as bytes, index for index; decoded when the users are set. */
  #hashes: readonly Uint8Array[] = [];
  /** Identity of the file content last loaded; null before the first load. */
  #version: string | null = null;
  #loading: Promise<void> | null = null;

  /** `usersDir`, when given, is where each new user gets their folder (`<home>/data/users`). */
  constructor(readonly file: string, private readonly usersDir?: string) {}

  /** The store of a home: its users.json, with folders under data/users. */
  static forHome(home: HomeLayout): UserStore {
    return new UserStore(home.usersFile, join(home.dataDir, "users"));
  }

  /** Does the users file exist yet? (A home without one is a fresh home.) */
  async exists(): Promise<boolean> {
    return (await fileVersion(this.file)) !== "missing";
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
    const users = await this.#read();
    if (users.some((u) => u.name === name)) {
      throw new UserStoreError(`user '${name}' already exists`);
    }
    const token = newToken();
    const user: StoredUser = {
      name,
      groups,
      admin: options.admin ?? false,
      ...(options.timeZone !== undefined ? { timeZone: options.timeZone } : {}),
      tokenHash: hashToken(token),
    };
    await this.#write([...users, user]);
    if (this.usersDir !== undefined) {
      await Deno.mkdir(join(this.usersDir, name), { recursive: true });
    }
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
    const users = await this.#read();
    if (!users.some((u) => u.name === name)) throw new UserStoreError(`no user '${name}'`);
    await this.#write(users.filter((u) => u.name !== name));
  }

  /** Gives a user a new token, which invalidates the old one; returns the new token. */
  async replaceToken(name: string): Promise<string> {
    const users = await this.#read();
    if (!users.some((u) => u.name === name)) throw new UserStoreError(`no user '${name}'`);
    const token = newToken();
    const tokenHash = hashToken(token);
    await this.#write(users.map((u) => u.name === name ? { ...u, tokenHash } : u));
    return token;
  }

  /** The user a token belongs to, or undefined. Sees changes other processes made to the file. */
  async authenticate(token: string): Promise<User | undefined> {
    if (!TOKEN_PATTERN.test(token)) return undefined;
    await this.#refresh();
    const hash = hashTokenBytes(token);
    let found: StoredUser | undefined;
    // Compare with every user, so the time taken does not tell which one matched.
    const users = this.#users;
    const hashes = this.#hashes;
    for (let i = 0; i < users.length; i++) if (sameHashBytes(hash, hashes[i])) found = users[i];
    return found && publicUser(found);
  }

  /** Reloads the cached users when the file changed since the last load. */
  async #refresh(): Promise<void> {
    while (this.#loading) await this.#loading;
    const version = fileVersionSync(this.file);
    if (version === this.#version) return;
    this.#loading = this.#readFile().then((users) => {
      this.#setUsers(users);
      this.#version = version;
    }).finally(() => {
      this.#loading = null;
    });
    await this.#loading;
  }

  /** The users as the file has them now (mutations always start from the file, not a cache). */
  async #read(): Promise<readonly StoredUser[]> {
    await this.#refresh();
    return this.#users;
  }

  #setUsers(users: readonly StoredUser[]): void {
    this.#users = users;
    this.#hashes = users.map((u) => hashBytes(u.tokenHash));
  }

  async #readFile(): Promise<StoredUser[]> {
    const text = await readTextIfExists(this.file);
    if (text === null) return [];
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw new UserStoreError(`${this.file} is not valid JSON: ${(e as Error).message}`);
    }
    const parsed = usersFileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new UserStoreError(
        `${this.file} is not a valid users file: ${issue.path.join(".")}: ${issue.message}`,
      );
    }
    return parsed.data.users;
  }

  async #write(users: readonly StoredUser[]): Promise<void> {
    await writeFileAtomic(this.file, JSON.stringify({ users }, null, 2) + "\n", { mode: 0o600 });
    this.#setUsers(users);
    this.#version = null; // the next read stats the new file and records its identity
  }
}
