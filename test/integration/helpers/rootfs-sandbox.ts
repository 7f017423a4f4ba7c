// Runs a command from an unpacked image root the way a container runtime does, with util-linux
// only (no runc on the host needed): its own PID namespace (the command is PID 1, as in a pod) and
// mount namespace; the root bind-mounted read-only (readOnlyRootFilesystem) with a fresh /proc, a
// tmpfs /dev holding the usual device nodes, and read-only volumes; then chroot into the image's
// WorkingDir and drop to the image's User with no supplementary groups. Every mount lives in the
// namespace, so it is gone when the command's last process is.
import { lstatSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

import type { ImageConfig } from './oci-archive.js';

export interface Volume {
  hostPath: string;
  mountPath: string;
}

// $1 root, $2 workdir, $3 uid, $4 gid, then host/container path pairs up to "--", then the command.
const SETUP = `set -eu
root=$1 wd=$2 uid=$3 gid=$4; shift 4
mount --bind "$root" "$root"
mkdir -p "$root/proc" "$root/dev"
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
mount -t tmpfs -o nosuid,noexec,mode=755,size=64k tmpfs "$root/dev"
for n in null zero full random urandom; do : >"$root/dev/$n"; mount --bind "/dev/$n" "$root/dev/$n"; done
while [ "$1" != -- ]; do
  mkdir -p "$root$2"
  mount --bind -o ro "$1" "$root$2"
  shift 2
done
shift
mount -o remount,bind,ro "$root"
exec unshare --root="$root" --wd="$wd" --setgid="$gid" --setuid="$uid" -- "$@"`;

export interface SandboxCommand {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** The image user "uid:gid" (numeric, as the Dockerfile sets it). */
function imageUser(config: ImageConfig): { uid: number; gid: number } {
  const m = /^(\d+):(\d+)$/.exec(config.User ?? '');
  if (!m) throw new Error(`image User "${config.User ?? ''}" is not numeric uid:gid`);
  return { uid: Number(m[1]), gid: Number(m[2]) };
}

/**
 * The setup script resolves mount paths on the host, where an absolute link in the image
 * (Debian's /var/run → /run) would point out of the root: only link-free paths are accepted.
 */
function assertNoSymlink(rootfs: string, mountPath: string): void {
  let path = rootfs;
  for (const part of posix.normalize(mountPath).split('/').filter(Boolean)) {
    path = join(path, part);
    try {
      if (lstatSync(path).isSymbolicLink()) throw new Error(`volume mount path ${mountPath}: ${path.slice(rootfs.length)} is a symlink in the image; use the path it points to`);
    } catch (e) {
      if (e instanceof Error && 'code' in e && e.code === 'ENOENT') return;
      throw e;
    }
  }
}

/**
 * spawn() arguments. `argv` replaces the image's Entrypoint+Cmd (like `docker run --entrypoint`);
 * `extraArgs` are appended to them (like arguments after the image name). The environment is the
 * image's Env plus `env`, nothing from this process.
 */
export function sandboxCommand(
  rootfs: string,
  config: ImageConfig,
  opts: { argv?: string[]; extraArgs?: string[]; env?: Record<string, string>; volumes?: Volume[] },
): SandboxCommand {
  const { uid, gid } = imageUser(config);
  const argv = [...(opts.argv ?? [...(config.Entrypoint ?? []), ...(config.Cmd ?? [])]), ...(opts.extraArgs ?? [])];
  if (argv.length === 0) throw new Error('nothing to run: no argv and the image has no Entrypoint/Cmd');
  const env: NodeJS.ProcessEnv = {};
  for (const kv of config.Env ?? []) {
    const i = kv.indexOf('=');
    env[kv.slice(0, i)] = kv.slice(i + 1);
  }
  Object.assign(env, opts.env);
  for (const v of opts.volumes ?? []) assertNoSymlink(rootfs, v.mountPath);
  const volumes = (opts.volumes ?? []).flatMap((v) => [v.hostPath, v.mountPath]);
  return {
    command: 'unshare',
    args: ['--mount', '--pid', '--fork', '--kill-child', '--', '/bin/sh', '-c', SETUP, 'sandbox', rootfs, config.WorkingDir || '/', String(uid), String(gid), ...volumes, '--', ...argv],
    env,
  };
}

/**
 * The host pid of the sandboxed command (PID 1 in its namespace) under the `unshare` process
 * `outerPid`, which only waits for it: signals meant for the container go here, as `runc kill`
 * sends them to the container's init.
 */
export function containerInitPid(outerPid: number): number | undefined {
  let children: string;
  try {
    children = readFileSync(`/proc/${outerPid}/task/${outerPid}/children`, 'utf8').trim();
  } catch {
    return undefined;
  }
  const pid = Number(children.split(/\s+/)[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** Lines of /proc/<pid>/status as a map ("Uid" → "65532\t65532\t65532\t65532"). */
export function procStatus(pid: number): Map<string, string> {
  return new Map(
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .filter((l) => l.includes(':'))
      .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
  );
}
