import { freePort } from '@cars/runtime';

export { freePort };
export { AppProcess, startApp, waitForOk } from '@cars/testing';
