"""qademo."""
