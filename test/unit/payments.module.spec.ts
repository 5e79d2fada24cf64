import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { PaymentsConfigurationError, PaymentsModule, PaymentsService } from '../../lib/index.js';

const valid = {
  apiKey: 'sk_test_secret_value',
  environment: 'sandbox' as const,
  baseUrl: 'https://sandbox.example.test',
  webhooks: false as const,
};

describe('PaymentsModule', () => {
  it('provides PaymentsService from forRoot', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [PaymentsModule.forRoot(valid)] }).compile();
    expect(moduleRef.get(PaymentsService)).toBeInstanceOf(PaymentsService);
  });

  it('fails at boot on a bad option, naming it', async () => {
    await expect(
      Test.createTestingModule({ imports: [PaymentsModule.forRoot({ ...valid, baseUrl: 'not a url' })] }).compile(),
    ).rejects.toThrow(PaymentsConfigurationError);
  });
});
