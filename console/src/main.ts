// The review console's entry point (README "Review console"): the key form, the two views and
// their tabs. Bundled by `npm run build:console` into src/console/public/console.js.
import { KeyError, KeyHolder, createApi, failureMessage } from './api.ts';
import { byId } from './dom.ts';
import { InputError, readChatInput, turnsOfText } from './input.ts';
import { alignTurns } from './explain.ts';
import { renderResult } from './view-result.ts';
import { setupFileView } from './view-file.ts';

const key = new KeyHolder();
const api = createApi(key);

/** A notice area (role="alert"): read out when it changes, hidden when empty. */
function notices(id: string) {
  const area = byId(id, HTMLElement);
  return {
    show(message: string) {
      area.textContent = message;
      area.hidden = false;
    },
    clear() {
      area.textContent = '';
      area.hidden = true;
    },
  };
}

// ---- the key: typed, held in memory, forgotten on request or when the tab closes -----------------

function setupKey(): void {
  const form = byId('key-form', HTMLFormElement);
  const input = byId('key-input', HTMLInputElement);
  const forget = byId('key-forget', HTMLButtonElement);
  const status = byId('key-status', HTMLElement);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    try {
      key.set(input.value);
      // The field is emptied: the key stays in this script's memory only, not in the page.
      input.value = '';
      status.textContent = 'Key held in this tab only; every call sends it. Reloading or closing the tab forgets it.';
      forget.hidden = false;
    } catch (err) {
      status.textContent = err instanceof KeyError ? err.message : String(err);
    }
  });
  forget.addEventListener('click', () => {
    key.clear();
    forget.hidden = true;
    status.textContent = 'Key forgotten. Type a key to score.';
    input.focus();
  });
}

// ---- tabs: One chat | File of chats (arrow keys move between them) --------------------------------

function setupTabs(): void {
  const tabs = [byId('tab-chat', HTMLButtonElement), byId('tab-file', HTMLButtonElement)];
  const select = (chosen: HTMLButtonElement) => {
    for (const tab of tabs) {
      const on = tab === chosen;
      tab.setAttribute('aria-selected', String(on));
      tab.tabIndex = on ? 0 : -1;
      const panel = document.getElementById(tab.getAttribute('aria-controls') ?? '');
      if (panel !== null) panel.hidden = !on;
    }
  };
  tabs.forEach((tab, i) => {
    tab.addEventListener('click', () => select(tab));
    tab.addEventListener('keydown', (ev) => {
      const to = ev.key === 'ArrowRight' ? i + 1 : ev.key === 'ArrowLeft' ? i - 1 : ev.key === 'Home' ? 0 : ev.key === 'End' ? tabs.length - 1 : undefined;
      if (to === undefined) return;
      ev.preventDefault();
      const next = tabs[(to + tabs.length) % tabs.length] as HTMLButtonElement;
      select(next);
      next.focus();
    });
  });
}

// ---- one chat -------------------------------------------------------------------------------------

function setupChat(): void {
  const form = byId('chat-form', HTMLFormElement);
  const text = byId('chat-text', HTMLTextAreaElement);
  const ageA = byId('age-a', HTMLInputElement);
  const ageB = byId('age-b', HTMLInputElement);
  const button = byId('chat-score', HTMLButtonElement);
  const result = byId('chat-result', HTMLElement);
  const notice = notices('chat-notice');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void (async () => {
      notice.clear();
      button.disabled = true;
      result.setAttribute('aria-busy', 'true');
      try {
        const input = readChatInput(text.value, { age_a: ageA.value, age_b: ageB.value });
        if (input.kind === 'text') {
          const scores = await api.scoreText(input.conversation, input.ages);
          const turns = scores.explanation === undefined ? [] : alignTurns(input.conversation, turnsOfText(input.conversation), scores.explanation);
          renderResult(result, { scores, messages: turns }, 'chat');
        } else {
          const scores = await api.scoreMessages(input.messages, input.ages);
          renderResult(result, { scores, messages: input.messages }, 'chat');
        }
        result.hidden = false;
      } catch (err) {
        // An earlier chat's result must not be read as this one's.
        result.hidden = true;
        notice.show(err instanceof InputError ? err.message : failureMessage(err));
      } finally {
        button.disabled = false;
        result.removeAttribute('aria-busy');
      }
    })();
  });
}

setupKey();
setupTabs();
setupChat();
setupFileView(api, notices('file-notice'));
