const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a UUID string (any version, either case): ids of intents, events and endpoints. */
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_RE.test(value);
