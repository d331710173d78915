// A confirmation in a modal <dialog> (the platform's: focus trapped, Escape closes).
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import { useT } from '../i18n';

export function Confirm(props: { open: boolean; title: string; children: ComponentChildren; confirm: string; onConfirm: () => void; onClose: () => void }) {
  const t = useT();
  const ref = useRef<HTMLDialogElement>(null);
  // A page may hold more than one (a programme and its tiers): each title its own id.
  const titleId = `confirm-${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} class="dialog" aria-labelledby={titleId} onClose={props.onClose}>
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
      <div class="dialog-actions">
        <button type="button" class="button button--danger" onClick={props.onConfirm}>
          {props.confirm}
        </button>
        <button type="button" class="button button--secondary" onClick={props.onClose}>
          {t('common.cancel')}
        </button>
      </div>
    </dialog>
  );
}

export function CopyButton({ value, label }: { value: string; label: string }) {
  const t = useT();
  const status = useRef<HTMLSpanElement>(null);
  return (
    <>
      <button
        type="button"
        class="button button--secondary"
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(value);
            if (status.current) status.current.textContent = t('common.copied');
          } catch {
            if (status.current) status.current.textContent = t('common.copy_failed');
          }
        }}
      >
        {label}
      </button>
      <span class="copy-status" role="status" ref={status} />
    </>
  );
}
