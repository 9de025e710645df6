"""Fill later"""
