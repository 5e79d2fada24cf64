import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PaymentMethodSetupsRepository } from '../../../sample/payment-methods/payment-method-setups.repository.js';
import { confirmInForm, type CheckoutSession, type PaymentMethodSetupView } from './sample-http.helpers.js';
import { requestJson, startSampleStack, waitFor, type SampleStack } from './sample-stack.fixture.js';

describe('sample merchant app: saving a payment method (setup intent)', () => {
  let stack: SampleStack;

  beforeAll(async () => {
    stack = await startSampleStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  const startSetup = async (): Promise<{ setup: PaymentMethodSetupView; checkout: CheckoutSession; text: string }> => {
    const answer = await requestJson<{ setup: PaymentMethodSetupView; checkout: CheckoutSession }>(
      'POST',
      `${stack.url}/payment-methods/setup`,
    );
    expect(answer.status).toBe(201);
    return { ...answer.body, text: answer.text };
  };
  const getSetup = async (id: string): Promise<PaymentMethodSetupView> =>
    (await requestJson<PaymentMethodSetupView>('GET', `${stack.url}/payment-methods/setup/${id}`)).body;
  const decided = (id: string) =>
    waitFor(async () => {
      const setup = await getSetup(id);
      return setup.status === 'pending' ? undefined : setup;
    }, `setup ${id} to be decided`);

  it('[C1][A4] POST /payment-methods/setup answers a pending setup and a checkout session, never the API key', async () => {
    const { setup, checkout, text } = await startSetup();
    expect(setup.status).toBe('pending');
    expect(new URL(checkout.formUrl).searchParams.get('token')).toEqual(expect.any(String));
    expect(text).not.toContain(stack.env['PAYMENTS_API_KEY']!);
  });

  it('setup_intent.succeeded marks the payment method saved', async () => {
    const { setup, checkout } = await startSetup();
    expect((await confirmInForm(checkout, 'succeeded')).status).toBe(200);
    const after = await decided(setup.id);
    expect(after).toMatchObject({ status: 'saved', reason: 'setup_intent.succeeded' });
  });

  it.each(['failed', 'errored', 'cancelled'])('setup_intent.%s marks saving failed', async (outcome) => {
    const { setup, checkout } = await startSetup();
    await confirmInForm(checkout, outcome);
    const after = await decided(setup.id);
    expect(after).toMatchObject({ status: 'failed', reason: `setup_intent.${outcome}` });
  });

  it("[C4] the form's confirm result alone does not mark the card saved", async () => {
    const { setup, checkout } = await startSetup();
    stack.simulator.controls.hold();
    try {
      const confirm = await confirmInForm(checkout, 'succeeded');
      expect(confirm.body.state).toBe('succeeded');
      expect((await getSetup(setup.id)).status).toBe('pending');
    } finally {
      stack.simulator.controls.release();
    }
    expect((await decided(setup.id)).status).toBe('saved');
  });

  it('a late failure event does not undo a saved payment method', async () => {
    const { setup, checkout } = await startSetup();
    await confirmInForm(checkout, 'succeeded');
    expect((await decided(setup.id)).status).toBe('saved');
    stack.simulator.emit(
      'setup_intent.errored',
      stack.app.get(PaymentMethodSetupsRepository).findById(setup.id)!.setupIntentId,
    );
    await stack.simulator.waitForIdle();
    expect((await getSetup(setup.id)).status).toBe('saved');
  });
});
