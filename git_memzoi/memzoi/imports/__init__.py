"""Import: classified import manifests, planned and then applied."""
