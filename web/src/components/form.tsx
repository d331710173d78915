// One way to submit and show errors (GOV.UK habits): the API's field errors next to each
// field (Shape A `{field: [messages]}` and Shape B `[{field, message}]` alike), summarised
// at the top with links to the fields, the summary focused so a screen reader reads it.
import type { ComponentChildren, PartialInputHTMLAttributes, PartialSelectHTMLAttributes, TextareaHTMLAttributes } from 'preact';
import { createContext } from 'preact';
import { useContext, useEffect, useId, useRef, useState } from 'preact/hooks';
import { failureOf, type Failure } from '../api/client';
import { useT } from '../i18n';

type ApiResult<T> = { data?: T; error?: unknown; response: Response };

export interface FormState {
  failure: Failure | undefined;
  busy: boolean;
  /** Runs one API call; on failure shows its errors and resolves undefined. */
  run<T>(call: () => Promise<ApiResult<T>>): Promise<T | undefined>;
  fail(failure: Failure | undefined): void;
  labels: Map<string, { id: string; label: string }>;
}

export function useForm(): FormState {
  const t = useT();
  const [failure, setFailure] = useState<Failure>();
  const [busy, setBusy] = useState(false);
  const labels = useRef(new Map<string, { id: string; label: string }>()).current;
  return {
    failure,
    busy,
    labels,
    fail: setFailure,
    async run(call) {
      setBusy(true);
      try {
        const r = await call();
        if (r.error !== undefined || !r.response.ok) {
          setFailure(failureOf(r.response, r.error, t('error.request_failed')));
          return undefined;
        }
        setFailure(undefined);
        return r.data;
      } catch {
        setFailure({ status: 0, code: undefined, message: t('error.network'), fields: {} });
        return undefined;
      } finally {
        setBusy(false);
      }
    },
  };
}

const FormContext = createContext<FormState | undefined>(undefined);

export function ErrorSummary({ form }: { form: FormState }) {
  const t = useT();
  const ref = useRef<HTMLDivElement>(null);
  const headingId = `summary-${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
  const failure = form.failure;
  useEffect(() => {
    if (failure) ref.current?.focus();
  }, [failure]);
  if (!failure) return null;
  const fields = Object.entries(failure.fields);
  return (
    <div class="error-summary" role="alert" tabIndex={-1} ref={ref} aria-labelledby={headingId}>
      <h2 id={headingId}>{t('form.problem')}</h2>
      <p>{failure.message}</p>
      {fields.length > 0 && (
        <ul>
          {fields.map(([field, messages]) => {
            const known = form.labels.get(field);
            return (
              <li key={field}>
                {known ? <a href={`#${known.id}`}>{known.label}: {messages.join(' ')}</a> : `${field}: ${messages.join(' ')}`}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}

export function Form(props: {
  form: FormState;
  onSubmit: (data: FormData, el: HTMLFormElement) => void | Promise<void>;
  children: ComponentChildren;
  label?: string;
  class?: string;
}) {
  return (
    <FormContext.Provider value={props.form}>
      <form
        noValidate
        class={props.class ?? 'form'}
        aria-label={props.label}
        onSubmit={(e) => {
          e.preventDefault();
          const el = e.currentTarget;
          void props.onSubmit(new FormData(el), el);
        }}
      >
        <ErrorSummary form={props.form} />
        {props.children}
      </form>
    </FormContext.Provider>
  );
}

interface ShellProps {
  name: string;
  label: string;
  hint?: string;
  children: (ids: { id: string; describedBy: string | undefined; invalid: boolean }) => ComponentChildren;
  class?: string;
}

function FieldShell({ name, label, hint, children, class: cls }: ShellProps) {
  const form = useContext(FormContext);
  const id = `f-${useId().replace(/[^A-Za-z0-9_-]/g, '')}-${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  form?.labels.set(name, { id, label });
  const errors = form?.failure?.fields[name];
  const describedBy = [hint ? `${id}-hint` : '', errors ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class={`field${errors ? ' field--error' : ''}${cls ? ` ${cls}` : ''}`}>
      <label for={id}>{label}</label>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {errors && (
        <p class="field-error" id={`${id}-error`}>
          {errors.join(' ')}
        </p>
      )}
      {children({ id, describedBy, invalid: Boolean(errors) })}
    </div>
  );
}

type InputProps = Omit<PartialInputHTMLAttributes<HTMLInputElement>, 'name' | 'label' | 'role'> & { name: string; label: string; hint?: string };

export function Field({ name, label, hint, class: cls, ...rest }: InputProps) {
  return (
    <FieldShell name={name} label={label} hint={hint} class={cls as string | undefined}>
      {({ id, describedBy, invalid }) => <input id={id} name={name} aria-describedby={describedBy} aria-invalid={invalid || undefined} {...(rest as object)} />}
    </FieldShell>
  );
}

type TextAreaProps = Omit<TextareaHTMLAttributes, 'name' | 'label'> & { name: string; label: string; hint?: string };

export function TextArea({ name, label, hint, ...rest }: TextAreaProps) {
  return (
    <FieldShell name={name} label={label} hint={hint}>
      {({ id, describedBy, invalid }) => <textarea id={id} name={name} aria-describedby={describedBy} aria-invalid={invalid || undefined} {...rest} />}
    </FieldShell>
  );
}

type SelectProps = Omit<PartialSelectHTMLAttributes<HTMLSelectElement>, 'name' | 'label' | 'role'> & {
  name: string;
  label: string;
  hint?: string;
  options: Array<{ value: string; label: string }>;
};

export function Select({ name, label, hint, options, defaultValue, ...rest }: SelectProps) {
  // The initial choice is marked on its <option>: a <select>'s defaultValue is set before its
  // options exist, so the browser would show the first one (and a form would send it).
  return (
    <FieldShell name={name} label={label} hint={hint}>
      {({ id, describedBy, invalid }) => (
        <select id={id} name={name} aria-describedby={describedBy} aria-invalid={invalid || undefined} {...(rest as object)}>
          {options.map((o) => (
            <option key={o.value} value={o.value} selected={defaultValue !== undefined && String(defaultValue) === o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </FieldShell>
  );
}

export function Checkbox({ name, label, checked }: { name: string; label: string; checked?: boolean }) {
  const form = useContext(FormContext);
  const id = `f-${useId().replace(/[^A-Za-z0-9_-]/g, '')}-${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  form?.labels.set(name, { id, label });
  const errors = form?.failure?.fields[name];
  return (
    <div class={`field field--checkbox${errors ? ' field--error' : ''}`}>
      {errors && (
        <p class="field-error" id={`${id}-error`}>
          {errors.join(' ')}
        </p>
      )}
      <input type="checkbox" id={id} name={name} value="true" defaultChecked={checked} aria-describedby={errors ? `${id}-error` : undefined} aria-invalid={errors ? true : undefined} />
      <label for={id}>{label}</label>
    </div>
  );
}

/** A set of checkboxes sending `name` once per ticked value (e.g. shop_ids), in a fieldset. */
export function CheckboxGroup({ name, legend, hint, options, checked }: { name: string; legend: string; hint?: string; options: Array<{ value: string; label: string }>; checked: string[] }) {
  const form = useContext(FormContext);
  const id = `f-${useId().replace(/[^A-Za-z0-9_-]/g, '')}-${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  form?.labels.set(name, { id: `${id}-0`, label: legend });
  // The API names the list (`shop_ids`) or one of its items (`shop_ids.1`).
  const errors = Object.entries(form?.failure?.fields ?? {})
    .filter(([field]) => field === name || field.startsWith(`${name}.`))
    .flatMap(([, messages]) => messages);
  const describedBy = [hint ? `${id}-hint` : '', errors.length > 0 ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <fieldset class={`field-group${errors.length > 0 ? ' field--error' : ''}`} aria-describedby={describedBy}>
      <legend>{legend}</legend>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {errors.length > 0 && (
        <p class="field-error" id={`${id}-error`}>
          {errors.join(' ')}
        </p>
      )}
      {options.map((o, i) => (
        <div class="field field--checkbox" key={o.value}>
          <input type="checkbox" id={`${id}-${i}`} name={name} value={o.value} defaultChecked={checked.includes(o.value)} />
          <label for={`${id}-${i}`}>{o.label}</label>
        </div>
      ))}
    </fieldset>
  );
}

export function Submit({ form, children }: { form: FormState; children: ComponentChildren }) {
  return (
    <button type="submit" class="button" disabled={form.busy}>
      {children}
    </button>
  );
}

// Reading a submitted form as the API's JSON types. An empty box is "not given".
export const text = (fd: FormData, name: string) => String(fd.get(name) ?? '').trim();
export const optText = (fd: FormData, name: string) => text(fd, name) || undefined;
export const nullText = (fd: FormData, name: string) => text(fd, name) || null;
export const bool = (fd: FormData, name: string) => fd.get(name) === 'true';
/** A number box: not given → undefined; text that is not a number is sent as is, for the API to name. */
export function optNumber(fd: FormData, name: string): number | undefined {
  const v = text(fd, name);
  if (v === '') return undefined;
  const n = Number(v.replace(',', '.'));
  return (Number.isFinite(n) ? n : v) as number;
}
export function nullNumber(fd: FormData, name: string): number | null {
  return optNumber(fd, name) ?? null;
}

export { changedFields } from './changed-fields';
