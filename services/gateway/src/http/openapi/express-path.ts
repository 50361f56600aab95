/** An OpenAPI path template as an Express route: `/keys/{key_id}` is `/keys/:key_id`. */
export const toExpressPath = (path: string) => path.replace(/\{([a-z_]+)\}/g, ':$1');
