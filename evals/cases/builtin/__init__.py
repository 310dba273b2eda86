"""The case set written for this project (YAML files; a package so that wheels ship them)."""
