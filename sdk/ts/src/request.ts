// Reading the custom resource of a request.

import type { CustomResource } from "./wire.gen.js";

function metadataString(obj: CustomResource, key: string): string {
  const v = obj.metadata?.[key];
  return typeof v === "string" ? v : "";
}

/** metadata.name of the custom resource ("" when it was excluded from the payload). */
export function objectName(obj: CustomResource): string {
  return metadataString(obj, "name");
}

/** metadata.namespace of the custom resource ("" when cluster-scoped). */
export function objectNamespace(obj: CustomResource): string {
  return metadataString(obj, "namespace");
}
