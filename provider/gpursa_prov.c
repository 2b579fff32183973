/* placeholder: the provider entry point is being written */
