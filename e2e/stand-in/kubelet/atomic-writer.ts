// The kubelet's atomic writer for secret, configMap and projected volumes: the files of one version are
// written into a fresh timestamped directory, `..data` is swapped to it in one rename, and each file
// name is a symlink through `..data`, so a reader never sees a mix of two versions (cert-manager's
// renewals rely on this: the webhook re-reads tls.crt and tls.key as a pair).
import { mkdirSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

let generation = 0;

/** Writes `files` (relative path → content) as the volume's new version in `dir`. */
export function writeVolumeVersion(
  dir: string,
  files: ReadonlyMap<string, Buffer | string>,
  mode = 0o644,
): void {
  mkdirSync(dir, { recursive: true });
  const stamp = `..${new Date().toISOString().replace(/[:.]/g, '_')}_${generation++}`;
  mkdirSync(join(dir, stamp));
  for (const [path, content] of files) {
    mkdirSync(dirname(join(dir, stamp, path)), { recursive: true });
    writeFileSync(join(dir, stamp, path), content, { mode });
  }
  let previous: string | undefined;
  try {
    previous = readlinkSync(join(dir, '..data'));
  } catch {
    previous = undefined;
  }
  rmSync(join(dir, '..data_tmp'), { force: true });
  symlinkSync(stamp, join(dir, '..data_tmp'));
  renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  // Top-level names only: a nested path is reached through its first directory's link.
  for (const top of new Set([...files.keys()].map((p) => p.split('/')[0]!))) {
    try {
      symlinkSync(join('..data', top), join(dir, top));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  if (previous && previous !== stamp) rmSync(join(dir, previous), { recursive: true, force: true });
}
