// A kubeconfig user's impersonation (as, as-groups, as-uid, as-user-extra) as client-go's
// ImpersonatingRoundTripper sends it: Impersonate-User, Impersonate-Group once per group,
// Impersonate-Uid, and Impersonate-Extra-<key> once per value, the key escaped as client-go's
// headerKeyEscape does.
import { type Fields, KubeconfigError, isFields } from './kubeconfig.js';

export const IMPERSONATION_FIELDS = ['as', 'as-groups', 'as-uid', 'as-user-extra'] as const;

export function impersonationHeaders(userName: string, user: Fields): Record<string, string | string[]> {
  const as = typeof user.as === 'string' ? user.as : '';
  const groups = stringList(user['as-groups']);
  const uid = typeof user['as-uid'] === 'string' ? user['as-uid'] : '';
  const extra = isFields(user['as-user-extra']) ? user['as-user-extra'] : {};
  if (as === '') {
    if (groups.length || uid !== '' || Object.keys(extra).length) {
      throw new KubeconfigError(`user ${userName}: as-groups, as-uid and as-user-extra need "as" (the user to impersonate)`);
    }
    return {};
  }
  const headers: Record<string, string | string[]> = { 'impersonate-user': as };
  if (groups.length) headers['impersonate-group'] = groups;
  if (uid !== '') headers['impersonate-uid'] = uid;
  for (const [key, values] of Object.entries(extra)) {
    const list = stringList(values);
    if (list.length) headers[`impersonate-extra-${escapeHeaderKey(key)}`] = list;
  }
  return headers;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** RFC 7230 token characters stay, except %; every other byte is %XX (client-go's headerKeyEscape). */
function escapeHeaderKey(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9!#$&'*+\-.^_`|~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
