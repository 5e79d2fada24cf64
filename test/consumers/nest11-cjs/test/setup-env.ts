// Placeholder payment settings for the app's own tests, loaded before each test file (test/jest-e2e.json,
// "setupFiles"): AppModule needs them to boot (the generated GET / test does not talk to the service).
// A test that talks to the simulator sets its own values; `??=` keeps any value already set.
process.env.PAYMENTS_API_KEY ??= 'sk_test_placeholder';
process.env.PAYMENTS_BASE_URL ??= 'https://payments.invalid';
process.env.PAYMENTS_WEBHOOK_SECRET ??= 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
