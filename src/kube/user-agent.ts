// Our User-Agent: audit logs attribute requests by it, and the API server names the field manager
// of our writes after its product part ("secondcron" in managedFields).

/** `secondcron/<version> (<identity>)`; the identity reduced to characters a header may carry. */
export function userAgent(version: string, identity: string): string {
  return `secondcron/${version} (${identity.replace(/[^\x20-\x7e]|[()]/g, '_')})`;
}
