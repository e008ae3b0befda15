import { chmodSync, lstatSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { NodeFS } from "@electric-sql/pglite/nodefs";

/**
 * The embedded database's files hold every partner's data: nobody but the service's own user may read
 * or change them. PGlite sets its files' modes itself (0666 from its bundled template, whatever the
 * process umask), so the modes are masked where it sets them, and whatever is already on disk is
 * tightened on every open.
 */

/** Group and other permission bits. */
const SHARED_BITS = 0o077;

/** The part of PGlite's Emscripten NODEFS that sets modes on disk: creating a node, and chmod. */
type NodeOps = {
  mknod(parent: unknown, name: string, mode: number, dev: number): unknown;
  setattr(node: unknown, attr: { mode?: number | null }): void;
};

/** Modules already masked, so a module shared between instances is not wrapped twice. */
const masked = new WeakSet<object>();

function maskModes(nodeOps: NodeOps): void {
  if (masked.has(nodeOps)) return;
  masked.add(nodeOps);
  const { mknod, setattr } = nodeOps;
  nodeOps.mknod = (parent, name, mode, dev) => mknod(parent, name, mode & ~SHARED_BITS, dev);
  nodeOps.setattr = (node, attr) =>
    setattr(node, attr.mode == null ? attr : { ...attr, mode: attr.mode & ~SHARED_BITS });
}

/** PGlite's Node filesystem whose every file and directory is created and kept private to the owner. */
class PrivateNodeFS extends NodeFS {
  override async init(...args: Parameters<NodeFS["init"]>): ReturnType<NodeFS["init"]> {
    const { emscriptenOpts } = await super.init(...args);
    const masking = (mod: { NODEFS: unknown }) => maskModes((mod.NODEFS as { node_ops: NodeOps }).node_ops);
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun ?? []), masking] } };
  }
}

/** Takes group and other bits off `path` and, for a directory, off everything under it (links are left alone). */
function tighten(path: string): void {
  const stats = lstatSync(path);
  if (stats.isSymbolicLink()) return;
  if ((stats.mode & SHARED_BITS) !== 0) chmodSync(path, stats.mode & 0o7777 & ~SHARED_BITS);
  if (stats.isDirectory()) for (const name of readdirSync(path)) tighten(join(path, name));
}

/**
 * Creates the data directory 0700 (or tightens an existing one and its contents) and returns the
 * filesystem PGlite should open it with, which keeps the files it creates later private too.
 */
export function privateDataDir(dataDir: string): NodeFS {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  tighten(dataDir);
  return new PrivateNodeFS(dataDir);
}
