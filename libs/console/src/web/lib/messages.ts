import { ApiError } from './api';
import { session } from './session';

/** How a refusal is shown: a short title and a sentence, never a bare status code. */
export interface HumanError {
  title: string;
  message: string;
  /** The refusal is about the plan or the email address: show the upgrade hint. */
  plan?: boolean;
}

export function seconds(value: number): string {
  if (value < 90) return `${value} second${value === 1 ? '' : 's'}`;
  const minutes = Math.ceil(value / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

/** Words an error for a person. `action` names what was tried ("create the endpoint"). */
export function humanize(error: unknown, action = 'finish that'): HumanError {
  if (!(error instanceof ApiError)) {
    return { title: 'Something went wrong', message: `We could not ${action}. Reload the page and try again.` };
  }
  if (error.offline) return { title: 'You appear to be offline', message: error.message };
  const server = sentence(error.message);
  switch (error.status) {
    case 400:
      return {
        title: 'Check the highlighted fields',
        message: Object.keys(error.details).length > 0 ? 'Some values were not accepted.' : server,
      };
    case 401:
      return { title: 'Signed out', message: 'Your session has ended. Sign in again to continue.' };
    case 403:
      if (/verif/i.test(error.message)) {
        const where = session.verificationEmailVia === 'log' ? "the link printed in the server's log" : 'the link we emailed you';
        return { title: 'Verify your email address first', message: `${server} Use ${where}, or resend it from the Overview page.`, plan: true };
      }
      return { title: 'Not included in your plan', message: `${server} Upgrade the plan to use it.`, plan: true };
    case 404:
      return { title: 'Not found', message: 'It may have been deleted, or it belongs to another account.' };
    case 409:
      return { title: conflictTitle(error.message), message: server, plan: /allowance|plan allows/i.test(error.message) };
    case 429:
      return {
        title: /month/i.test(error.message) ? 'Monthly allowance used up' : 'Too many attempts',
        message: error.retryAfter ? `${server.replace(/\s*retry after.*$/i, '')} Try again in ${seconds(error.retryAfter)}.` : server,
      };
    default:
      if (error.status >= 500) {
        return { title: 'The service is busy', message: `We could not ${action} just now. Please try again in a moment.` };
      }
      return { title: 'That did not work', message: server };
  }
}

function conflictTitle(message: string): string {
  if (/paused/i.test(message)) return 'The endpoint is paused';
  if (/\btest\b/i.test(message)) return 'Test already sent';
  if (/in flight|attempt/i.test(message)) return 'A delivery is in progress';
  if (/API keys/i.test(message)) return 'Key limit reached';
  if (/already verified/i.test(message)) return 'Already verified';
  if (/allowance|limit|webhook endpoint/i.test(message)) return 'Endpoint limit reached';
  return 'Not possible right now';
}

/** Capitalised, with a full stop. */
function sentence(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) return '';
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

