import type { AxiosInstance } from 'axios';

/** The axios instance of `PaymentsHttpTransport`, over keep-alive agents that `close()` ends. */
export interface PaymentsHttpConnection {
  axios: AxiosInstance;
  /** Closes the keep-alive sockets. */
  close(): void;
}

/**
 * Loads axios and makes the transport's instance over keep-alive agents. Called on the client's first
 * call, not at start-up: an instance that only receives webhooks never loads axios (~3.5 MB of heap
 * that every major GC would mark; bench/NOTES.md, issues 30 and 31).
 */
export async function openPaymentsHttpConnection(): Promise<PaymentsHttpConnection> {
  const [{ default: axios }, http, https] = await Promise.all([
    import('axios'),
    import('node:http'),
    import('node:https'),
  ]);
  const httpAgent = new http.Agent({ keepAlive: true });
  const httpsAgent = new https.Agent({ keepAlive: true });
  const instance = axios.create({
    httpAgent,
    httpsAgent,
    // Statuses are mapped by the transport, not by axios; a redirect is an answer, never followed (it
    // could carry the key to another host); no proxy from the environment sees the key either.
    validateStatus: () => true,
    maxRedirects: 0,
    proxy: false,
    // A stream, read by the transport up to http.maxResponseBytes: axios would buffer an answer of any size.
    responseType: 'stream',
    transformResponse: [(data: unknown) => data],
    timeout: 0,
  });
  return {
    axios: instance,
    close: () => {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
