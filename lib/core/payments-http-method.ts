/** HTTP methods the client sends. */
export type PaymentsHttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
