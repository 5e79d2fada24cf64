// As `nest new` v12 writes it (@nestjs/schematics 12, application/files/ts-esm/vitest.config.e2e.ts).
import { defineConfig } from 'vitest/config';
import tsconfigPaths from 'vite-tsconfig-paths';

export default defineConfig({
  plugins: [tsconfigPaths()],
  test: {
    globals: true,
    root: './',
    include: ['**/*.e2e-spec.ts'],
    setupFiles: ['./test/setup-env.ts'], // placeholder payment settings (added to the generated file)
  },
});
