// The slices of Kubernetes objects this operator reads and writes, as plain JSON shapes
// (what the API server and watch events actually carry: timestamps are strings).

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion: string;
  generation?: number;
  creationTimestamp: string;
  deletionTimestamp?: string;
  finalizers?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

export interface ListResponse<T> {
  metadata: { resourceVersion: string; continue?: string };
  items: T[];
}

export interface WatchStatus {
  kind?: string;
  code?: number;
  reason?: string;
  message?: string;
}

/**
 * `<namespace>/<name>`, made with join(): one flat string. A template literal makes a cons string that
 * keeps a flat copy of itself once hashed (a Map key), 72 instead of 40 bytes, and the caches, the
 * controller's records and the gauges each keep a key per resource (a heap snapshot at 10,000, issue 36).
 */
export function objectKey(obj: KubeObject): string {
  return obj.metadata.namespace ? [obj.metadata.namespace, obj.metadata.name].join('/') : obj.metadata.name;
}
