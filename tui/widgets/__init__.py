"""The app's panes, one module each."""
