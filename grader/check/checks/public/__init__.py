"""The public checks: properties, finite differences and worked examples, none needing the reference; in both kits."""
