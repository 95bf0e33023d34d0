"""The app's actions by job (settings, chains, compare, exports): mixins of ``KernelTuiApp``."""
