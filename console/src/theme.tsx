import { useState } from 'preact/hooks';

/** Light or dark: the system's choice until the member picks one (kept in this browser). */
const KEY = 'console.theme';
type Theme = 'light' | 'dark';

function preferred(): Theme {
  const saved = localStorage.getItem(KEY);
  if (saved === 'light' || saved === 'dark') return saved;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function applyTheme(theme: Theme = preferred()): void {
  document.documentElement.dataset.theme = theme;
}

export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(preferred());
  const next: Theme = theme === 'dark' ? 'light' : 'dark';
  return (
    <button
      type="button"
      class="btn"
      aria-label={`Switch to the ${next} theme`}
      onClick={() => {
        localStorage.setItem(KEY, next);
        applyTheme(next);
        setTheme(next);
      }}
    >
      {theme === 'dark' ? 'Light' : 'Dark'}
    </button>
  );
}
