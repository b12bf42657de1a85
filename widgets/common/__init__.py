"""What every browser-drawn widget shares: the component base, field specs and bundles."""
