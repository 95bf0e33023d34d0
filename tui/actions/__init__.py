"""The app's actions by job (settings, chains, compare, exports, ...): mixins that ``tui.app``
composes into ``KernelTuiApp``, each typed against ``tui.actions.host.AppHost``, never the app."""
