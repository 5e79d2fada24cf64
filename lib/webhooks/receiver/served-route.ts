import { RequestMethod } from '@nestjs/common';
import type { ApplicationConfig } from '@nestjs/core';

/**
 * The route Nest maps for `path`: with `app.setGlobalPrefix('api')`, `/api/<path>`, unless the prefix's
 * `exclude` covers it. The route is version-neutral, so URI versioning adds no `/v1`.
 */
export function servedRouteOf(path: string, config: ApplicationConfig | undefined): string {
  const route = `/${path}`;
  const prefix = (config?.getGlobalPrefix() ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix === '') return route;
  const excluded = (config?.getGlobalPrefixOptions()?.exclude ?? []).some(
    (rule) =>
      (rule.requestMethod === RequestMethod.ALL ||
        rule.requestMethod === RequestMethod.POST ||
        (rule.requestMethod as number) === -1) &&
      rule.pathRegex instanceof RegExp &&
      rule.pathRegex.test(route),
  );
  return excluded ? route : `/${prefix}${route}`;
}
