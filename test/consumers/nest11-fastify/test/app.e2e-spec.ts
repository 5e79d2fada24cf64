// `nest new`'s e2e test (GET /), on Fastify as Nest's testing docs write it: `new FastifyAdapter()`
// and `app.inject()` instead of supertest on the Express server. Untouched otherwise; it boots the
// real AppModule, whose payment settings come from test/setup-env.ts.
import { Test, TestingModule } from '@nestjs/testing';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './../src/app.module';

describe('AppController (e2e)', () => {
  let app: NestFastifyApplication;

  beforeEach(async () => {
    const moduleFixture: TestingModule = await Test.createTestingModule({
      imports: [AppModule],
    }).compile();

    app = moduleFixture.createNestApplication<NestFastifyApplication>(new FastifyAdapter());
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });

  it('/ (GET)', () => {
    return app.inject({ method: 'GET', url: '/' }).then((result) => {
      expect(result.statusCode).toEqual(200);
      expect(result.payload).toEqual('Hello World!');
    });
  });

  afterEach(async () => {
    await app.close();
  });
});
