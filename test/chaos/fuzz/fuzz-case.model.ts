import type { FuzzScheme } from './fuzz-receiver.fixture.js';

/** A payload the service could send: every field a valid WebhookEventPayload has, plus fuzzed extras. */
export interface EventBodySpec {
  kind: 'event';
  id: string;
  /** false: a `webhook_id` the receiver does not accept (401 unknown_endpoint). */
  allowedEndpoint: boolean;
  otherEndpointId: string;
  /** A documented name, or an unknown one (answered 200, no handler). */
  type: string;
  /** Handlers throw for this event (metadata `fuzz_fail: true`): the only 500 allowed. */
  fail: boolean;
  amount: number;
  extraData: Record<string, unknown>;
  metadata: Record<string, unknown> | null | 'absent';
  format: 'compact' | 'pretty' | 'escaped';
  /** Adds `"__proto__"` and `"constructor"` keys to `data` (prototype-pollution attempt; still a valid payload). */
  pollute: boolean;
}

/** Bodies that are not a valid payload (or not JSON at all). */
export type JunkBodySpec =
  | { kind: 'bytes'; bytes: Uint8Array }
  | { kind: 'text'; text: string }
  | { kind: 'json'; json: string }
  | { kind: 'shape'; value: Record<string, unknown>; pollute: boolean }
  | { kind: 'deep'; depth: number; open: 'array' | 'object' }
  | { kind: 'oversize'; size: number; fill: 'json' | 'bytes' }
  | { kind: 'bom'; event: EventBodySpec }
  | { kind: 'empty' };

export type BodySpec = EventBodySpec | JunkBodySpec;

/** Changes made to a validly signed delivery; each one breaks the signature. */
export type MutationSpec =
  | { op: 'flipBody'; at: number; xor: number }
  | { op: 'truncateBody'; by: number }
  | { op: 'appendBody'; bytes: Uint8Array }
  | { op: 'flipSignature'; at: number; shift: number }
  | { op: 'shiftTimestamp'; by: number }
  | { op: 'changeId'; id: string }
  | { op: 'dropHeader'; which: 'signature' | 'timestamp' | 'id' }
  | { op: 'wrongVersion'; tag: string }
  | { op: 'duplicateTimestamp'; by: number };

export type SignatureSpec =
  /** Signed with a configured secret, timestamp well inside the window; variations that keep it valid. */
  | {
      kind: 'valid';
      secretIndex: 0 | 1;
      skewSeconds: number;
      mixedCaseNames: boolean;
      junkEntries: string[];
      upperHex: boolean;
    }
  | { kind: 'none' }
  | { kind: 'junk'; headers: Array<[string, string]> }
  | { kind: 'foreign'; skewSeconds: number }
  | { kind: 'stale'; skewSeconds: number }
  | { kind: 'malformedTimestamp'; value: string }
  | { kind: 'mutated'; secretIndex: 0 | 1; skewSeconds: number; mutation: MutationSpec };

/** Malformed HTTP written straight to a socket. */
export type RawJunkSpec =
  | { kind: 'badRequestLine'; line: string }
  | { kind: 'badContentLength'; value: string; body: string }
  | { kind: 'shortBody'; declared: number; body: string }
  | { kind: 'badChunked'; sizeLine: string; body: string }
  | { kind: 'lengthAndChunked'; body: string }
  | { kind: 'garbage'; bytes: Uint8Array }
  | { kind: 'headerFlood'; count: number };

export type FuzzCategory = 'junk' | 'signedJunk' | 'mutated' | 'valid' | 'replay' | 'rawJunk';

/** One fuzz case, as pure data (fast-check generates and shrinks it; the builder turns it into bytes). */
export interface FuzzCaseSpec {
  category: FuzzCategory;
  target: FuzzScheme;
  method: string;
  path: string;
  body: BodySpec;
  signature: SignatureSpec;
  /** null: no Content-Type header. */
  contentType: string | null;
  extraHeaders: Array<[string, string]>;
  /** 'chunked': sent with Transfer-Encoding: chunked over a raw socket, in these chunk sizes. */
  transport: 'http' | 'chunked';
  chunkSizes: number[];
  /** replay: which recent valid event to send again. */
  replayPick: number;
  raw: RawJunkSpec | null;
}
